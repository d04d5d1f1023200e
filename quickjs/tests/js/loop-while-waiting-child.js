import * as os from 'qjs:os';

const parent = os.Worker.parent;
parent.onmessage = (e) => {
  parent.onmessage = null;
  const ia = new Int32Array(e.data.sab);
  let sent = 0;
  const send = () => {
    parent.postMessage('hello');
    if (++sent < 3) os.setTimeout(send, 50);
  };
  send();
  os.setTimeout(() => {
    Atomics.store(ia, 0, 1);
    Atomics.notify(ia, 0);
  }, 300);
};
