// Serves the built demo (demo/dist) on 127.0.0.1 with the two headers that
// make a page cross-origin isolated, which is what gives it SharedArrayBuffer
// and shared WebAssembly.Memory:
//   Cross-Origin-Opener-Policy: same-origin
//   Cross-Origin-Embedder-Policy: require-corp
//
//   node demo/serve.mjs [--port N] [--host H] [--no-isolation] [--root DIR]
//
// --port 0 picks a free port; the first line on stdout is always
// "parklot demo: <url>". --no-isolation leaves the headers out, to see what a
// misconfigured server gives (the pages then explain what is missing).
// --root serves another directory the same way (the tests' small apps).
// /wasm-app/ is always tests/wasm-app/www/: a wasm-bindgen app with Rayon
// in workers and locks on the main thread (built by scripts/build-wasm-app.sh).
// Stops on SIGINT or SIGTERM.
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const USAGE = 'usage: node demo/serve.mjs [--port N] [--host H] [--no-isolation] [--root DIR]';
const DEMO = fileURLToPath(new URL('./dist/', import.meta.url));
/** URL prefixes served from other directories than the root. */
const MOUNTS = [['/wasm-app/', fileURLToPath(new URL('../tests/wasm-app/www/', import.meta.url))]];
const DEFAULT_PORT = 8080;

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

function parseArgs(argv) {
  const args = { port: DEFAULT_PORT, portGiven: false, host: '127.0.0.1', isolation: true, root: DEMO };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port') {
      args.port = Number(argv[++i]);
      args.portGiven = true;
      if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) die(`--port needs a number 0-65535\n${USAGE}`);
    } else if (a === '--host') {
      args.host = argv[++i] ?? die(`--host needs an address\n${USAGE}`);
    } else if (a === '--root') {
      const dir = argv[++i] ?? die(`--root needs a directory\n${USAGE}`);
      args.root = join(resolve(dir), sep);
    } else if (a === '--no-isolation') {
      args.isolation = false;
    } else if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else {
      die(`unknown argument ${a}\n${USAGE}`);
    }
  }
  return args;
}

function die(msg) {
  console.error(`parklot demo: ${msg}`);
  process.exit(2);
}

/** The file a URL path names (under ROOT or a mount), or undefined if it escapes that directory or does not exist. */
function resolveFile(urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath.split('?')[0]);
  } catch {
    return undefined;
  }
  let dir = ROOT;
  for (const [prefix, mounted] of MOUNTS) {
    if (path.startsWith(prefix)) {
      dir = mounted;
      path = path.slice(prefix.length - 1);
      break;
    }
  }
  const full = normalize(join(dir, path));
  if (full !== dir.slice(0, -1) && !full.startsWith(dir)) return undefined;
  for (const candidate of [full, join(full, 'index.html'), `${full}.html`]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

const args = parseArgs(process.argv.slice(2));
const ROOT = args.root;
try {
  statSync(join(ROOT, 'index.html'));
} catch {
  if (ROOT !== DEMO) die(`${ROOT} has no index.html`);
  die(`demo${sep}dist is missing: build it first (npm start does, or: npm run build:demo)`);
}

const server = createServer((req, res) => {
  const headers = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };
  if (args.isolation) {
    headers['Cross-Origin-Opener-Policy'] = 'same-origin';
    headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
    headers['Cross-Origin-Resource-Policy'] = 'same-origin';
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...headers, Allow: 'GET, HEAD' }).end();
    return;
  }
  let pathname;
  try {
    pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    // `//`, say: a request target the URL parser refuses.
    res.writeHead(400, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('bad request\n');
    return;
  }
  const file = resolveFile(pathname);
  if (!file) {
    res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
});

function listen(port) {
  server.listen(port, args.host);
}

server.on('error', (e) => {
  // The default port is busy (another demo, say): take any free one instead.
  if (e.code === 'EADDRINUSE' && !args.portGiven) {
    console.error(`parklot demo: port ${args.port} is busy, taking a free one (choose with --port N)`);
    args.portGiven = true;
    listen(0);
    return;
  }
  die(`cannot listen on ${args.host}:${args.port}: ${e.message}`);
});

server.on('listening', () => {
  const { port } = server.address();
  const host = args.host.includes(':') ? `[${args.host}]` : args.host;
  console.log(`parklot demo: http://${host}:${port}/`);
  if (!args.isolation) console.log('  (served WITHOUT Cross-Origin-Opener-Policy / Cross-Origin-Embedder-Policy: the pages will explain)');
  console.log('  pages: / (what a ParkingLot is), /arena.html (lock arena), /lab.html (wait/notify lab)');
  console.log('         /wasm-app/ (a Rust app with Rayon; after bash scripts/build-wasm-app.sh)');
  console.log('  stop with Ctrl-C');
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}

listen(args.port);
