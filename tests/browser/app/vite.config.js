// Cross-origin isolation, which any page that shares memory needs (nothing here is parklot's).
const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
export default { server: { headers }, preview: { headers } };
