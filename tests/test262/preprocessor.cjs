'use strict';
// test262-harness preprocessor: puts the host hooks (tests/test262/agent.cjs)
// at the top of each test, before the harness includes that use `$262.agent`
// (after a "use strict" directive, which must stay first). The runner names
// agent.cjs in PARKLOT_TEST262_AGENT; eshost's node host gives the test's
// realm `require`.

const SETUP =
  "require(require('process').env.PARKLOT_TEST262_AGENT).setUp(globalThis, $262);\n";
const DIRECTIVE = /^(["'])use strict\1;?[ \t]*\r?\n?/;

module.exports = function addHostHooks(test) {
  // Node's main thread may block ([[CanBlock]] is true, as the spec allows):
  // tests for hosts where it may not do not apply.
  if (test.attrs.flags.CanBlockIsFalse) return false;
  const directive = DIRECTIVE.exec(test.contents);
  const at = directive ? directive[0].length : 0;
  test.contents = test.contents.slice(0, at) + SETUP + test.contents.slice(at);
  return test;
};
