// A secret the server holds in plaintext, such as a Google access token: `new Secret(token)`
// logs and serialises as `[secret]`; only `reveal()` gives the text, in the one place that sends
// it to its service.
/** A secret the server needs in plaintext (a Google token). Logging or serialising it shows `[secret]`. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  /** The plaintext, for the one place that sends it to its service. */
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[secret]';
  }
  toJSON(): string {
    return '[secret]';
  }
  // console.log and util.inspect on Node and Bun, and Deno's inspect, ask these first.
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'Secret([secret])';
  }
  [Symbol.for('Deno.customInspect')](): string {
    return 'Secret([secret])';
  }
}
