/**
 * Runs a script's main and exits with its outcome: 0, or 1 with the error printed. The exit is
 * explicit because the stacks a script starts (Temporal connections, servers) keep Node alive.
 */
export function runScript(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
