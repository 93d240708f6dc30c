/** Workflow entry points registered with the worker. Workflow code is deterministic: no I/O. */
export {};
