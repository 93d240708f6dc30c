import { defineConfig } from 'vite';

// The embeddable widget (web/widget/, docs/web-calls.md): one classic script, dist/widget.js,
// which the API serves at /widget.js. Built after the dashboard (which empties dist/).
export default defineConfig({
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    lib: { entry: 'widget/main.ts', formats: ['iife'], name: 'VapWidget', fileName: () => 'widget.js' },
  },
});
