// The build lands in the Python package, which ships it and the server
// serves it: `arca view` needs no Node.
import { defineConfig } from 'vite';

export default defineConfig({
  // Relative asset URLs, so the app works under any prefix.
  base: './',
  build: {
    outDir: '../crates/arca-py/python/arca/viewer',
    emptyOutDir: true,
    // No source maps: they would double the package for no user.
    sourcemap: false,
    chunkSizeWarningLimit: 4096,
  },
});
