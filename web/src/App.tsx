import { lazy, Suspense } from 'react';
import { Center, Loader } from '@mantine/core';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { useSession } from './auth';
import { Shell } from './components/Shell';
import { LoginPage } from './pages/LoginPage';
import { NotFoundPage } from './pages/NotFoundPage';

// Pages load on first visit: the login page and the frame do not wait for the flow editor's code.
const HomePage = lazy(() => import('./pages/HomePage').then((m) => ({ default: m.HomePage })));
const AgentsPage = lazy(() => import('./pages/AgentsPage').then((m) => ({ default: m.AgentsPage })));
const AgentEditorPage = lazy(() => import('./pages/AgentEditorPage').then((m) => ({ default: m.AgentEditorPage })));
const AgentTestsPage = lazy(() => import('./pages/AgentTestsPage').then((m) => ({ default: m.AgentTestsPage })));
const FlowEditorPage = lazy(() => import('./pages/FlowEditorPage').then((m) => ({ default: m.FlowEditorPage })));
const ToolsPage = lazy(() => import('./pages/ToolsPage').then((m) => ({ default: m.ToolsPage })));
const McpServersPage = lazy(() => import('./pages/McpServersPage').then((m) => ({ default: m.McpServersPage })));
const KnowledgeBasesPage = lazy(() => import('./pages/KnowledgeBasesPage').then((m) => ({ default: m.KnowledgeBasesPage })));
const KnowledgeBasePage = lazy(() => import('./pages/KnowledgeBasePage').then((m) => ({ default: m.KnowledgeBasePage })));
const CallsPage = lazy(() => import('./pages/CallsPage').then((m) => ({ default: m.CallsPage })));
const CallPage = lazy(() => import('./pages/CallPage').then((m) => ({ default: m.CallPage })));
const TelephonyPage = lazy(() => import('./pages/settings/TelephonyPage').then((m) => ({ default: m.TelephonyPage })));
const EndpointsPage = lazy(() => import('./pages/settings/EndpointsPage').then((m) => ({ default: m.EndpointsPage })));
const UsersPage = lazy(() => import('./pages/settings/UsersPage').then((m) => ({ default: m.UsersPage })));
const ApiKeysPage = lazy(() => import('./pages/settings/ApiKeysPage').then((m) => ({ default: m.ApiKeysPage })));
const CampaignsPage = lazy(() => import('./pages/CampaignsPage').then((m) => ({ default: m.CampaignsPage })));
const CampaignPage = lazy(() => import('./pages/CampaignPage').then((m) => ({ default: m.CampaignPage })));
const DoNotCallPage = lazy(() => import('./pages/DoNotCallPage').then((m) => ({ default: m.DoNotCallPage })));

export function App() {
  const { user, loading } = useSession();
  const location = useLocation();
  if (loading) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  if (!user) {
    return (
      <Routes>
        <Route path="/login" element={<LoginPage />} />
        <Route path="*" element={<Navigate to="/login" replace state={{ from: location.pathname + location.search }} />} />
      </Routes>
    );
  }
  return (
    <Shell>
      <Suspense
        fallback={
          <Center p="xl">
            <Loader aria-label="Loading" />
          </Center>
        }
      >
        <Routes>
          <Route path="/" element={<HomePage />} />
          <Route path="/login" element={<Navigate to={(location.state as { from?: string } | null)?.from ?? '/'} replace />} />
          <Route path="/agents" element={<AgentsPage />} />
          <Route path="/agents/new" element={<AgentEditorPage />} />
          <Route path="/agents/:agentId" element={<AgentEditorPage />} />
          <Route path="/agents/:agentId/flow" element={<FlowEditorPage />} />
          <Route path="/agents/:agentId/tests" element={<AgentTestsPage />} />
          <Route path="/tools" element={<ToolsPage />} />
          <Route path="/mcp-servers" element={<McpServersPage />} />
          <Route path="/knowledge-bases" element={<KnowledgeBasesPage />} />
          <Route path="/knowledge-bases/:knowledgeBaseId" element={<KnowledgeBasePage />} />
          <Route path="/calls" element={<CallsPage />} />
          <Route path="/calls/:callId" element={<CallPage />} />
          <Route path="/campaigns" element={<CampaignsPage />} />
          <Route path="/campaigns/:campaignId" element={<CampaignPage />} />
          <Route path="/do-not-call" element={<DoNotCallPage />} />
          <Route path="/settings/telephony" element={<TelephonyPage />} />
          <Route path="/settings/endpoints" element={<EndpointsPage />} />
          <Route path="/settings/users" element={<UsersPage />} />
          <Route path="/settings/api-keys" element={<ApiKeysPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </Suspense>
    </Shell>
  );
}
