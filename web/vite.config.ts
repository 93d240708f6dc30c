import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `npm run dev -w web` proxies the API of a platform started with `npm start` (PORT, default 8000).
const api = `http://127.0.0.1:${process.env.PORT ?? 8000}`;

export default defineConfig({
  plugins: [react()],
  server: { port: Number(process.env.WEB_DEV_PORT ?? 5173), proxy: { '/api': api } },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 2000 },
});
