/** One line per event on stdout, prefixed with the time; errors on stderr. */
export interface Log {
  info(message: string): void;
  error(message: string): void;
}

export const consoleLog: Log = {
  info: (message) => console.log(`${new Date().toISOString()} ${message}`),
  error: (message) => console.error(`${new Date().toISOString()} ${message}`),
};
