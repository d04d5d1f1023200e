/**
 * Host types that the public declarations mention, spelled so that a
 * consumer needs neither the DOM's types nor Node's: each is the host's own
 * type where the consumer's TypeScript knows it (lib "DOM", @types/node),
 * and a plain stand-in where it does not.
 */

/** `WebAssembly.Module`. */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : object;

/** `WebAssembly.Memory`. */
export type WasmMemory = typeof globalThis extends { WebAssembly: { Memory: { prototype: infer T } } } ? T : { readonly buffer: SharedArrayBuffer };

/** `URL`. */
export type UrlLike = typeof globalThis extends { URL: { prototype: infer T } } ? T : { readonly href: string };
