import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The console, built into web/dist, which the api serves at /. `npx vite web` serves it with hot reload and
// sends the API calls to an api on :3000 (npm start).
const api = process.env.GATEHOUSE_API ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The content security policy allows no inline script or style, so nothing is inlined.
    assetsInlineLimit: 0,
  },
  server: {
    proxy: {
      '/api': api,
      '/console/api': api,
      '/mcp': api,
      '/.well-known': api,
      // The authorization server's endpoints and the consent page's calls go to the api; the consent page itself
      // (/oauth/interaction/{uid}) is the console's, served here.
      '/oauth': { target: api, bypass: (request) => (/^\/oauth\/interaction\/[^/?]+(\?|$)/.test(request.url ?? '') ? '/index.html' : undefined) },
    },
  },
});
