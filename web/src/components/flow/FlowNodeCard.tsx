/** A flow node on the canvas: its key, marks, functions; connections come in left and go out right. */
import { Badge, Group, Paper, Stack, Text } from '@mantine/core';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import type { FlowNode } from '../../api/types';

export type FlowNodeData = { node: FlowNode; problems: string[] };
export type FlowCanvasNode = Node<FlowNodeData, 'flowNode'>;

export function FlowNodeCard({ data, selected }: NodeProps<FlowCanvasNode>) {
  const { node, problems } = data;
  const border = problems.length ? 'var(--mantine-color-red-6)' : selected ? 'var(--mantine-color-indigo-6)' : 'var(--mantine-color-gray-4)';
  return (
    <Paper
      shadow={selected ? 'md' : 'xs'}
      p="xs"
      w={200}
      style={{ border: `2px solid ${border}` }}
      data-testid={`flow-node-${node.node_key}`}
      aria-label={`Node ${node.node_key}${problems.length ? `, problem: ${problems.join('; ')}` : ''}`}
    >
      <Handle type="target" position={Position.Left} aria-label={`Into ${node.node_key}`} />
      <Stack gap={4}>
        <Group gap={4} justify="space-between" wrap="nowrap">
          <Text fw={700} size="sm" truncate>
            {node.node_key}
          </Text>
          <Group gap={2} wrap="nowrap">
            {node.is_initial && (
              <Badge size="xs" color="green">
                start
              </Badge>
            )}
            {node.is_terminal && (
              <Badge size="xs" color="gray">
                end
              </Badge>
            )}
          </Group>
        </Group>
        <Text size="xs" c="dimmed" lineClamp={2}>
          {node.task_messages[0]?.content ?? node.role_messages[0]?.content ?? 'No messages yet'}
        </Text>
        <Group gap={4}>
          {node.functions.length > 0 && <Badge size="xs" variant="light">{node.functions.length} functions</Badge>}
          {node.tool_ids.length > 0 && <Badge size="xs" variant="light" color="violet">{node.tool_ids.length} tools</Badge>}
          {node.pre_actions.length > 0 && <Badge size="xs" variant="light" color="orange">{node.pre_actions.length} pre-actions</Badge>}
        </Group>
        {problems.map((p) => (
          <Text key={p} size="xs" c="red">
            {p}
          </Text>
        ))}
      </Stack>
      <Handle type="source" position={Position.Right} aria-label={`Out of ${node.node_key}`} />
    </Paper>
  );
}
