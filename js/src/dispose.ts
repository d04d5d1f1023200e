/**
 * The symbol TypeScript 5.2's `using` calls at the end of its block, for the
 * primitives' `[Symbol.dispose]()` (their `free()`). A module of its own, so
 * that the package's types need nothing more than ES2022 to read it.
 */

declare global {
  interface SymbolConstructor {
    /** `using` calls it at the end of its block (TypeScript 5.2+, esnext.disposable). */
    readonly dispose: unique symbol;
  }
}

/**
 * `Symbol.dispose` where the engine has it (Node 20 does), else the symbol
 * TypeScript's and esbuild's `using` helpers fall back to.
 */
export const disposeSymbol: typeof Symbol.dispose =
  (Symbol as { dispose?: typeof Symbol.dispose }).dispose ?? (Symbol.for('Symbol.dispose') as typeof Symbol.dispose);
