// Runs before each page's module script (a classic script, so it also runs
// when a page is opened as a file). A page can only share memory between
// threads when it is cross-origin isolated; if it is not, this explains what
// is missing and how to fix it, instead of letting the demo fail obscurely.
(function () {
  var problems = [];
  if (location.protocol === 'file:') problems.push('file');
  else if (!self.crossOriginIsolated) problems.push('headers');
  if (typeof Atomics === 'undefined' || typeof Atomics.waitAsync !== 'function') problems.push('waitAsync');
  document.documentElement.dataset.isolation = problems.length ? problems.join(' ') : 'ok';
  if (!problems.length) return;

  var why = {
    file:
      '<p>This page was opened as a <strong>file</strong>. Browsers give shared memory only to pages ' +
      'served over HTTP with the right headers. From the project, run <code>npm start</code> and open the ' +
      'address it prints (<code>http://127.0.0.1:8080/</code>).</p>',
    headers:
      '<p>This page is <strong>not cross-origin isolated</strong> (<code>crossOriginIsolated === false</code>), ' +
      'so it may not share memory with its workers: it has no <code>SharedArrayBuffer</code> constructor, and although ' +
      'it can still create a shared <code>WebAssembly.Memory</code>, <code>postMessage</code> refuses to send that ' +
      'memory to a worker (<code>DataCloneError</code>); parklot\u2019s <code>Runtime.create()</code> stops with a ' +
      '<code>TypeError</code> that says so. ' +
      'The server must send these two headers with every page, script and wasm file:</p>' +
      '<pre>Cross-Origin-Opener-Policy: same-origin\nCross-Origin-Embedder-Policy: require-corp</pre>' +
      '<p><code>npm start</code> serves the demo with both. With your own server, add them to its ' +
      'configuration; everything else the page loads must come from the same origin (or send ' +
      '<code>Cross-Origin-Resource-Policy</code>).</p>',
    waitAsync:
      '<p>This browser has no <code>Atomics.waitAsync</code>, which the page\u2019s main thread needs to wait ' +
      'without blocking. It ships in Chrome and Edge 91+, Safari 16.4+ and Firefox 145+.</p>',
  };
  function show() {
    var box = document.createElement('section');
    box.id = 'isolation-help';
    box.setAttribute('role', 'alert');
    box.innerHTML =
      '<h2>This page cannot share memory between threads</h2>' +
      problems.map(function (p) { return why[p]; }).join('');
    var main = document.querySelector('main') || document.body;
    main.insertBefore(box, main.firstChild);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', show);
  else show();
})();
