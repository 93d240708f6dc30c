/**
 * The page frame: header (menu button on phones, assistant toggle, account menu), navigation,
 * the dashboard assistant as a side panel on every page, and the text test chat and outbound
 * call dialogs, which any page can open.
 */
import { useMemo, useState, type ReactNode } from 'react';
import { ActionIcon, AppShell, Burger, Group, Menu, NavLink, ScrollArea, Text, Title, Tooltip, UnstyledButton } from '@mantine/core';
import { useDisclosure, useMediaQuery } from '@mantine/hooks';
import {
  IconHome,
  IconRobot,
  IconTool,
  IconPlugConnected,
  IconBooks,
  IconPhoneCall,
  IconSpeakerphone,
  IconSettings,
  IconNumbers,
  IconUsers,
  IconKey,
  IconMessageChatbot,
  IconLogout,
  IconUserCircle,
} from '@tabler/icons-react';
import { Link, useLocation } from 'react-router';
import { useSession } from '../auth';
import { PanelsContext, type Panels } from '../panels';
import { Sidechat } from './Sidechat';
import { TestChatDrawer } from './TestChatDrawer';
import { OutboundCallModal } from './OutboundCallModal';

interface NavItem {
  to: string;
  label: string;
  icon: ReactNode;
  adminOnly?: boolean;
}

const NAV: NavItem[] = [
  { to: '/', label: 'Home', icon: <IconHome size={18} /> },
  { to: '/agents', label: 'Agents', icon: <IconRobot size={18} /> },
  { to: '/tools', label: 'Tools', icon: <IconTool size={18} /> },
  { to: '/mcp-servers', label: 'MCP servers', icon: <IconPlugConnected size={18} /> },
  { to: '/knowledge-bases', label: 'Knowledge bases', icon: <IconBooks size={18} /> },
  { to: '/calls', label: 'Calls', icon: <IconPhoneCall size={18} /> },
  { to: '/campaigns', label: 'Campaigns', icon: <IconSpeakerphone size={18} /> },
  { to: '/settings/telephony', label: 'Telephony', icon: <IconSettings size={18} />, adminOnly: true },
  { to: '/settings/endpoints', label: 'Phone numbers', icon: <IconNumbers size={18} />, adminOnly: true },
  { to: '/settings/users', label: 'Users', icon: <IconUsers size={18} />, adminOnly: true },
  { to: '/settings/api-keys', label: 'API keys', icon: <IconKey size={18} /> },
];

export function Shell({ children }: { children: ReactNode }) {
  const { user, isAdmin, logout } = useSession();
  const location = useLocation();
  const [navOpen, nav] = useDisclosure(false);
  const [assistantOpen, assistant] = useDisclosure(false);
  const isPhone = useMediaQuery('(max-width: 48em)');
  const [testChat, setTestChat] = useState<{ agentName?: string } | null>(null);
  const [outbound, setOutbound] = useState<{ agentName?: string } | null>(null);
  const [assistantAgentId, setAssistantAgentId] = useState<string | undefined>();

  const panels = useMemo<Panels>(
    () => ({
      openTestChat: (agentName) => setTestChat({ agentName }),
      openOutboundCall: (agentName) => setOutbound({ agentName }),
      setAssistantAgent: setAssistantAgentId,
    }),
    [],
  );
  const isActive = (to: string) => (to === '/' ? location.pathname === '/' : location.pathname.startsWith(to));

  return (
    <PanelsContext.Provider value={panels}>
      <AppShell
        header={{ height: 56 }}
        navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !navOpen } }}
        aside={{ width: 380, breakpoint: 'md', collapsed: { desktop: !assistantOpen, mobile: !assistantOpen } }}
        padding="md"
      >
        <AppShell.Header>
          <Group h="100%" px="md" justify="space-between" wrap="nowrap">
            <Group gap="sm" wrap="nowrap">
              <Burger opened={navOpen} onClick={nav.toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
              <UnstyledButton component={Link} to="/" aria-label="Voice Agent Platform home">
                <Title order={4}>{isPhone ? 'VAP' : 'Voice Agent Platform'}</Title>
              </UnstyledButton>
            </Group>
            <Group gap="xs" wrap="nowrap">
              <Tooltip label="Assistant">
                <ActionIcon variant={assistantOpen ? 'filled' : 'light'} size="lg" onClick={assistant.toggle} aria-label="Toggle assistant" aria-pressed={assistantOpen}>
                  <IconMessageChatbot size={20} />
                </ActionIcon>
              </Tooltip>
              <Menu position="bottom-end">
                <Menu.Target>
                  <ActionIcon variant="subtle" size="lg" aria-label="Account menu">
                    <IconUserCircle size={22} />
                  </ActionIcon>
                </Menu.Target>
                <Menu.Dropdown>
                  <Menu.Label>
                    <Text size="sm">{user?.email}</Text>
                    <Text size="xs" c="dimmed">
                      {user?.role}
                    </Text>
                  </Menu.Label>
                  <Menu.Item leftSection={<IconLogout size={16} />} onClick={() => logout()}>
                    Log out
                  </Menu.Item>
                </Menu.Dropdown>
              </Menu>
            </Group>
          </Group>
        </AppShell.Header>

        <AppShell.Navbar p="xs" aria-label="Main navigation">
          <AppShell.Section grow component={ScrollArea}>
            {NAV.filter((item) => !item.adminOnly || isAdmin).map((item) => (
              <NavLink
                key={item.to}
                component={Link}
                to={item.to}
                label={item.label}
                leftSection={item.icon}
                active={isActive(item.to)}
                onClick={nav.close}
              />
            ))}
          </AppShell.Section>
        </AppShell.Navbar>

        <AppShell.Aside p="sm" aria-label="Assistant">
          {assistantOpen && <Sidechat agentId={assistantAgentId} onClose={assistant.close} />}
        </AppShell.Aside>

        <AppShell.Main>{children}</AppShell.Main>
      </AppShell>
      <TestChatDrawer opened={testChat !== null} agentName={testChat?.agentName} onClose={() => setTestChat(null)} />
      <OutboundCallModal opened={outbound !== null} agentName={outbound?.agentName} onClose={() => setOutbound(null)} />
    </PanelsContext.Provider>
  );
}
