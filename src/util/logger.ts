/** Progress and diagnostics. Everything goes to stderr so stdout stays for results scripts read. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

export function consoleLogger(options: { verbose?: boolean; stream?: NodeJS.WritableStream } = {}): Logger {
  const stream = options.stream ?? process.stderr;
  const write = (prefix: string, message: string) => stream.write(`${prefix}${message}\n`);
  return {
    info: (m) => write("", m),
    warn: (m) => write("warning: ", m),
    debug: (m) => {
      if (options.verbose) write("debug: ", m);
    },
  };
}

/** A logger that drops everything; for tests that do not look at progress output. */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, debug: () => {} };
