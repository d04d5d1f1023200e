/** The landing page: says whether this page is cross-origin isolated. */
import { byId, isolated } from './common.js';

const state = byId('isolation-state');
state.textContent = isolated() ? 'crossOriginIsolated: true, shared memory available' : 'not isolated: see the box at the top';
state.className = `value ${isolated() ? 'ok' : 'fail'}`;
