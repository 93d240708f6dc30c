import { Center, Loader } from '@mantine/core';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { useSession } from './auth';
import { Shell } from './components/Shell';
import { LoginPage } from './pages/LoginPage';
import { HomePage } from './pages/HomePage';
import { AgentsPage } from './pages/AgentsPage';
import { AgentEditorPage } from './pages/AgentEditorPage';
import { FlowEditorPage } from './pages/FlowEditorPage';
import { ToolsPage } from './pages/ToolsPage';
import { CallsPage } from './pages/CallsPage';
import { CallPage } from './pages/CallPage';
import { TelephonyPage } from './pages/settings/TelephonyPage';
import { EndpointsPage } from './pages/settings/EndpointsPage';
import { UsersPage } from './pages/settings/UsersPage';
import { ApiKeysPage } from './pages/settings/ApiKeysPage';
import { NotFoundPage } from './pages/NotFoundPage';

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
      <Routes>
        <Route path="/" element={<HomePage />} />
        <Route path="/login" element={<Navigate to={(location.state as { from?: string } | null)?.from ?? '/'} replace />} />
        <Route path="/agents" element={<AgentsPage />} />
        <Route path="/agents/new" element={<AgentEditorPage />} />
        <Route path="/agents/:agentId" element={<AgentEditorPage />} />
        <Route path="/agents/:agentId/flow" element={<FlowEditorPage />} />
        <Route path="/tools" element={<ToolsPage />} />
        <Route path="/calls" element={<CallsPage />} />
        <Route path="/calls/:callId" element={<CallPage />} />
        <Route path="/settings/telephony" element={<TelephonyPage />} />
        <Route path="/settings/endpoints" element={<EndpointsPage />} />
        <Route path="/settings/users" element={<UsersPage />} />
        <Route path="/settings/api-keys" element={<ApiKeysPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </Shell>
  );
}
