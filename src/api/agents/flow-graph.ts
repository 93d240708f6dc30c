/**
 * Graph-level rules of a flow: unique keys, one entry node, transitions that land on existing
 * nodes, every node reachable from the entry. PUT /flow and bundle import reject a graph with any
 * issue; GET /flow lists them as `problems`, because the node-by-node endpoints allow an
 * unfinished graph while it is being built. Pure: no database.
 */
import { HttpError } from '../errors';

export interface GraphNode {
  node_key: string;
  is_initial: boolean;
  functions: Array<{ name: string; next_node_key?: string | null }>;
}

export interface GraphIssue {
  /** Request field the issue belongs to, e.g. `nodes.2.functions.0.next_node_key`. */
  field: string;
  /** Self-contained description naming the nodes involved. */
  message: string;
}

export function graphIssues(nodes: GraphNode[], prefix = 'nodes'): GraphIssue[] {
  const issues: GraphIssue[] = [];
  const keys = new Set<string>();
  nodes.forEach((node, i) => {
    if (keys.has(node.node_key)) issues.push({ field: `${prefix}.${i}.node_key`, message: `duplicate node_key "${node.node_key}"` });
    keys.add(node.node_key);
  });

  const initials = nodes.filter((n) => n.is_initial);
  if (nodes.length > 0 && initials.length === 0) {
    issues.push({ field: prefix, message: 'no initial node: set is_initial on the entry node' });
  }
  if (initials.length > 1) {
    const second = nodes.indexOf(initials[1]!);
    issues.push({ field: `${prefix}.${second}.is_initial`, message: `more than one initial node: ${initials.map((n) => n.node_key).join(', ')}` });
  }

  nodes.forEach((node, i) =>
    node.functions.forEach((fn, j) => {
      if (fn.next_node_key && !keys.has(fn.next_node_key)) {
        issues.push({
          field: `${prefix}.${i}.functions.${j}.next_node_key`,
          message: `node "${node.node_key}" function "${fn.name}" points to unknown node "${fn.next_node_key}"`,
        });
      }
    }),
  );

  if (initials.length === 1) {
    const unreachable = unreachableFrom(initials[0]!.node_key, nodes);
    if (unreachable.length > 0) {
      issues.push({ field: prefix, message: `unreachable from the initial node "${initials[0]!.node_key}": ${unreachable.join(', ')}` });
    }
  }
  return issues;
}

function unreachableFrom(start: string, nodes: GraphNode[]): string[] {
  const byKey = new Map(nodes.map((n) => [n.node_key, n]));
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const fn of byKey.get(queue.shift()!)?.functions ?? []) {
      if (fn.next_node_key && byKey.has(fn.next_node_key) && !seen.has(fn.next_node_key)) {
        seen.add(fn.next_node_key);
        queue.push(fn.next_node_key);
      }
    }
  }
  return [...byKey.keys()].filter((k) => !seen.has(k));
}

/** 422 listing the first issues, each naming its field. */
export function assertValidGraph(nodes: GraphNode[], prefix = 'nodes'): void {
  const issues = graphIssues(nodes, prefix);
  if (issues.length > 0) throw new HttpError(422, issues.slice(0, 5).map((i) => `${i.field}: ${i.message}`).join('; '));
}
