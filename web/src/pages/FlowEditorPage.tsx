/**
 * The flow of an agent as a graph (React Flow): nodes at their saved `position_xy`, one edge per
 * function with a `next_node_key`. Dragging a node saves its position; connecting two nodes adds
 * a function to the source node; deleting a connection removes its function. Graph problems from
 * GET /flow are shown on the nodes they concern.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Alert, Anchor, Button, Grid, Paper, Stack, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Background, Controls, MarkerType, ReactFlow, useReactFlow, applyEdgeChanges, applyNodeChanges, type Connection, type Edge, type EdgeChange, type NodeChange } from '@xyflow/react';
import { Link, useParams } from 'react-router';
import { api, ApiError, unwrap } from '../api/client';
import type { FlowFunction, FlowNode } from '../api/types';
import { ApiErrorAlert, QueryState } from '../components/ApiErrorAlert';
import { ConfirmModal } from '../components/ConfirmModal';
import { ModalForm } from '../components/ModalForm';
import { PageHeader } from '../components/PageHeader';
import { FlowNodeCard, type FlowCanvasNode } from '../components/flow/FlowNodeCard';
import { NodeEditor, type NodePatch } from '../components/flow/NodeEditor';
import { splitFieldErrors } from '../lib/field-errors';
import { usePanels } from '../panels';

const NODE_TYPES = { flowNode: FlowNodeCard };
const GRID_X = 260;
const GRID_Y = 170;

/** Where a node without saved coordinates goes: a grid in list order. */
const defaultPosition = (index: number) => ({ x: 40 + (index % 4) * GRID_X, y: 40 + Math.floor(index / 4) * GRID_Y });

/**
 * Frames the graph again when a node is added or removed, or the editor panel opens or closes
 * (the canvas changes width), so no node ends up out of view.
 */
function FitView({ count, panelOpen }: { count: number; panelOpen: boolean }) {
  const { fitView } = useReactFlow();
  useEffect(() => {
    const timer = setTimeout(() => void fitView({ maxZoom: 1 }), 50);
    return () => clearTimeout(timer);
  }, [count, panelOpen, fitView]);
  return null;
}

/** Problems that name a node: `node "x" …` (dangling transition) or `unreachable …: a, b`. */
function problemsByNode(problems: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const p of problems) {
    const named = /^node "([^"]+)"/.exec(p)?.[1];
    if (named) (out[named] ??= []).push(p.replace(/^node "[^"]+" /, ''));
    if (p.startsWith('unreachable')) for (const key of p.slice(p.lastIndexOf(': ') + 2).split(', ')) (out[key] ??= []).push('unreachable from the initial node');
  }
  return out;
}

/** A snake_case function name for a transition to `target`, unique in the node. */
function transitionName(target: string, existing: FlowFunction[]): string {
  const base = `go_to_${target.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 60);
  let name = base;
  for (let n = 2; existing.some((f) => f.name === name); n++) name = `${base}_${n}`;
  return name;
}

export function FlowEditorPage() {
  const { agentId } = useParams();
  const agent = useQuery({ queryKey: ['agents', agentId], queryFn: () => unwrap(api.GET('/api/agents/{agent_id}', { params: { path: { agent_id: agentId! } } })) });
  const flow = useQuery({ queryKey: ['agents', agentId, 'flow'], queryFn: () => unwrap(api.GET('/api/agents/{agent_id}/flow', { params: { path: { agent_id: agentId! } } })) });
  const panels = usePanels();
  useEffect(() => {
    panels.setAssistantAgent(agentId);
    return () => panels.setAssistantAgent(undefined);
  }, [agentId, panels]);
  return (
    <QueryState query={flow}>
      {(f) => (
        <FlowEditor
          agentId={agentId!}
          agentName={agent.data?.name}
          destinations={(agent.data?.transfer_destinations ?? []).map((d) => d.name)}
          nodes={f.nodes}
          problems={f.problems}
        />
      )}
    </QueryState>
  );
}

function FlowEditor({ agentId, agentName, destinations, nodes, problems }: { agentId: string; agentName?: string; destinations: string[]; nodes: FlowNode[]; problems: string[] }) {
  const queryClient = useQueryClient();
  const tools = useQuery({ queryKey: ['tools'], queryFn: () => unwrap(api.GET('/api/tools')) });
  const [selectedKey, setSelectedKey] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const [newKey, setNewKey] = useState('');
  const [deleting, setDeleting] = useState<string | null>(null);
  const [nodeErrors, setNodeErrors] = useState<{ fields: Record<string, string>; general: string[] }>({ fields: {}, general: [] });
  const [actionError, setActionError] = useState<unknown>(null);
  const nodeProblems = useMemo(() => problemsByNode(problems), [problems]);
  const graphProblems = problems.filter((p) => !/^node "/.test(p) && !p.startsWith('unreachable'));

  const toCanvas = useCallback(
    (list: FlowNode[]): FlowCanvasNode[] =>
      list.map((node, i) => ({
        id: node.node_key,
        type: 'flowNode',
        position: node.position_xy ?? defaultPosition(i),
        data: { node, problems: nodeProblems[node.node_key] ?? [] },
        selected: node.node_key === selectedKey,
        ariaLabel: `Node ${node.node_key}`,
      })),
    [nodeProblems, selectedKey],
  );
  const [canvasNodes, setCanvasNodes] = useState<FlowCanvasNode[]>(() => toCanvas(nodes));
  useEffect(() => setCanvasNodes(toCanvas(nodes)), [nodes, toCanvas]);

  const graphEdges: Edge[] = useMemo(() => {
    const keys = new Set(nodes.map((n) => n.node_key));
    return nodes.flatMap((node) =>
      node.functions
        .filter((fn) => fn.next_node_key && keys.has(fn.next_node_key))
        .map((fn) => ({
          id: `${node.node_key}→${fn.name}`,
          source: node.node_key,
          target: fn.next_node_key!,
          label: fn.name,
          markerEnd: { type: MarkerType.ArrowClosed },
          ariaLabel: `${node.node_key} to ${fn.next_node_key} via ${fn.name}`,
          data: { functionName: fn.name },
        })),
    );
  }, [nodes]);
  const [edges, setEdges] = useState<Edge[]>(graphEdges);
  useEffect(() => setEdges(graphEdges), [graphEdges]);

  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ['agents', agentId] });
    void queryClient.invalidateQueries({ queryKey: ['agents'], exact: true });
  };
  const patchNode = (nodeKey: string, body: NodePatch) =>
    unwrap(api.PATCH('/api/agents/{agent_id}/nodes/{node_key}', { params: { path: { agent_id: agentId, node_key: nodeKey } }, body }));

  const moved = useMutation({
    mutationFn: ({ key, x, y }: { key: string; x: number; y: number }) => patchNode(key, { position_xy: { x: Math.round(x), y: Math.round(y) } }),
    onSuccess: refresh,
    onError: setActionError,
  });
  const connect = useMutation({
    mutationFn: async ({ source, target }: { source: string; target: string }) => {
      const node = nodes.find((n) => n.node_key === source)!;
      const fn: FlowFunction = { name: transitionName(target, node.functions), description: `Move on to ${target}`, next_node_key: target, properties: {}, required: [] };
      return patchNode(source, { functions: [...node.functions, fn] });
    },
    onSuccess: refresh,
    onError: setActionError,
  });
  const disconnect = useMutation({
    mutationFn: async (removed: Edge[]) => {
      for (const edge of removed) {
        const node = nodes.find((n) => n.node_key === edge.source);
        const name = (edge.data as { functionName: string }).functionName;
        if (node) await patchNode(node.node_key, { functions: node.functions.filter((f) => f.name !== name) });
      }
    },
    onSuccess: refresh,
    onError: setActionError,
  });
  const addNode = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/agents/{agent_id}/nodes', {
          params: { path: { agent_id: agentId } },
          body: { node_key: newKey, is_initial: nodes.length === 0, position_xy: defaultPosition(nodes.length) },
        }),
      ),
    onSuccess: (node) => {
      setAdding(false);
      setNewKey('');
      notifications.show({ message: `Node ${node.node_key} added`, color: 'green' });
      refresh();
    },
  });
  const removeNode = useMutation({
    mutationFn: (key: string) => unwrap(api.DELETE('/api/agents/{agent_id}/nodes/{node_key}', { params: { path: { agent_id: agentId, node_key: key } } })),
    onSuccess: () => {
      setDeleting(null);
      setSelectedKey(null);
      refresh();
    },
    onError: (err) => {
      setDeleting(null);
      setActionError(err);
    },
  });
  const saveNode = useMutation({
    mutationFn: async ({ key, patch }: { key: string; patch: NodePatch }) => {
      // One initial node per agent: hand the mark over rather than fail.
      const previous = nodes.find((n) => n.is_initial && n.node_key !== key);
      if (patch.is_initial && previous) await patchNode(previous.node_key, { is_initial: false });
      return patchNode(key, patch);
    },
    onMutate: () => setNodeErrors({ fields: {}, general: [] }),
    onSuccess: (node) => {
      setSelectedKey(node.node_key);
      notifications.show({ message: `Node ${node.node_key} saved`, color: 'green' });
      refresh();
    },
    onError: (err) => {
      if (err instanceof ApiError && (err.status === 422 || err.status === 409)) {
        const split = splitFieldErrors(err.detail, () => true);
        setNodeErrors(err.status === 409 ? { fields: { node_key: err.detail }, general: [] } : split);
      } else setNodeErrors({ fields: {}, general: [err.message] });
    },
  });

  const onNodesChange = useCallback((changes: NodeChange<FlowCanvasNode>[]) => {
    setCanvasNodes((current) => applyNodeChanges(changes, current));
  }, []);
  const onEdgesChange = useCallback((changes: EdgeChange<Edge>[]) => setEdges((current) => applyEdgeChanges(changes, current)), []);

  const selected = nodes.find((n) => n.node_key === selectedKey);

  return (
    <>
      <PageHeader
        title={
          <>
            Flow of{' '}
            <Anchor component={Link} to={`/agents/${agentId}`} inherit>
              {agentName ?? 'agent'}
            </Anchor>
          </>
        }
      >
        <Button leftSection={<IconPlus size={16} />} onClick={() => setAdding(true)}>
          Add node
        </Button>
      </PageHeader>
      <Stack gap="xs" mb="sm">
        {nodes.length === 0 && <Alert color="blue">No nodes: this agent is freeform. Add a node to make it a flow agent; the first node is where calls start.</Alert>}
        {graphProblems.map((p) => (
          <Alert key={p} color="orange" p="xs" role="status">
            {p}
          </Alert>
        ))}
        {problems.length > 0 && (
          <Text size="sm" c="orange" role="status" aria-label="Flow problems">
            {problems.length} problem{problems.length > 1 ? 's' : ''} keep this flow from running: {problems.join('; ')}
          </Text>
        )}
        {actionError !== null && <ApiErrorAlert error={actionError} />}
      </Stack>
      <Grid>
        <Grid.Col span={{ base: 12, md: selected ? 7 : 12 }}>
          <Paper withBorder h={{ base: 420, md: 'calc(100vh - 200px)' }} mih={420} style={{ overflow: 'hidden' }}>
            <ReactFlow<FlowCanvasNode, Edge>
              nodes={canvasNodes}
              edges={edges}
              nodeTypes={NODE_TYPES}
              onNodesChange={onNodesChange}
              // A click opens the node's editor; a drag only moves it.
              onNodeClick={(_e, node) => setSelectedKey(node.id)}
              onNodeDragStop={(_e, node) => moved.mutate({ key: node.id, x: node.position.x, y: node.position.y })}
              onConnect={(c: Connection) => c.source !== c.target && connect.mutate({ source: c.source, target: c.target })}
              onEdgesChange={onEdgesChange}
              onEdgesDelete={(removed) => disconnect.mutate(removed)}
              // Deleting a node asks first; connections go at once (their function is removed).
              onBeforeDelete={async ({ nodes: doomed }) => {
                if (doomed.length) setDeleting(doomed[0]!.id);
                return doomed.length === 0;
              }}
              onPaneClick={() => setSelectedKey(null)}
              deleteKeyCode={['Delete', 'Backspace']}
              fitView
              fitViewOptions={{ maxZoom: 1 }}
              aria-label="Flow graph"
            >
              <Background />
              <Controls />
              <FitView count={nodes.length} panelOpen={selected !== undefined} />
            </ReactFlow>
          </Paper>
          <Text size="xs" c="dimmed" mt={4}>
            Drag nodes to arrange them; drag from a node's right handle to another node's left handle to add a transition. Select a connection or node and press Delete to remove it.
          </Text>
        </Grid.Col>
        {selected && (
          <Grid.Col span={{ base: 12, md: 5 }}>
            <Paper withBorder p="sm" mah={{ md: 'calc(100vh - 200px)' }} style={{ overflowY: 'auto' }}>
              <NodeEditor
                key={`${selected.id}:${selected.updated_at}`}
                node={selected}
                nodeKeys={nodes.map((n) => n.node_key)}
                tools={tools.data ?? []}
                destinations={destinations}
                errors={nodeErrors.fields}
                generalErrors={[...nodeErrors.general, ...Object.entries(nodeErrors.fields).map(([f, m]) => `${f}: ${m}`)]}
                saving={saveNode.isPending}
                onSave={(patch) => saveNode.mutate({ key: selected.node_key, patch })}
                onDelete={() => setDeleting(selected.node_key)}
              />
            </Paper>
          </Grid.Col>
        )}
      </Grid>

      <ModalForm opened={adding} title="Add node" submitLabel="Add" busy={addNode.isPending} error={addNode.error} onSubmit={() => addNode.mutate()} onClose={() => setAdding(false)}>
        <TextInput label="Node key" description="letters, digits, _ and -" required data-autofocus value={newKey} onChange={(e) => setNewKey(e.currentTarget.value)} />
      </ModalForm>
      <ConfirmModal opened={deleting !== null} title="Delete node" confirmLabel="Delete" danger busy={removeNode.isPending} onClose={() => setDeleting(null)} onConfirm={() => deleting && removeNode.mutate(deleting)}>
        Delete node <b>{deleting}</b>? Transitions into it stay and are reported as problems until you change them.
      </ConfirmModal>
    </>
  );
}
