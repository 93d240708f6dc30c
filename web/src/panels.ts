import { createContext, useContext } from 'react';

/** Dialogs and panels of the page frame that any page can open. */
export interface Panels {
  openTestChat(agentName?: string): void;
  openOutboundCall(agentName?: string): void;
  /** The agent the user has open, passed to the assistant as context. */
  setAssistantAgent(agentId: string | undefined): void;
}

export const PanelsContext = createContext<Panels | null>(null);

export function usePanels(): Panels {
  const panels = useContext(PanelsContext);
  if (!panels) throw new Error('usePanels outside Shell');
  return panels;
}
