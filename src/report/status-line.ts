const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const CLEAR_LINE = "\r\x1b[2K";

interface TerminalStream extends NodeJS.WritableStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * On a terminal, one spinner line below the log that says what the run is
 * doing now and for how long (a convergence wait can take a minute; a silent
 * terminal looks hung). Every other write to the stream, whoever makes it
 * (the progress lines, the logger, a warning), first clears the spinner and
 * then gets it redrawn below, so the log above stays clean. On anything but
 * a terminal (CI logs, pipes, files) it does nothing at all: plain lines only.
 */
export class StatusLine {
  private text = "";
  private since = 0;
  private frame = 0;
  private drawn = false;
  /** The spinner is drawn only on a fresh line: never after another writer's unfinished line. */
  private atLineStart = true;
  private timer: NodeJS.Timeout | undefined;
  /** Writes past the wrapper (the spinner's own drawing). */
  private readonly raw: (text: string) => void;
  /** Puts the stream's own write back. */
  private readonly restore: () => void;

  private constructor(
    private readonly stream: TerminalStream,
    private readonly clock: { now(): number },
    intervalMs: number,
  ) {
    const own = Object.getOwnPropertyDescriptor(stream, "write");
    const original = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    this.raw = (text) => void original(text);
    this.restore = () => {
      if (own) Object.defineProperty(stream, "write", own);
      else delete (stream as { write?: unknown }).write;
    };
    // Every writer to the stream goes through here while the status line is up.
    stream.write = (chunk: unknown, ...rest: unknown[]) => {
      this.clear();
      const result = original(chunk, ...rest);
      this.atLineStart = endsWithNewline(chunk, this.atLineStart);
      this.draw();
      return result;
    };
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  /** A status line on `stream` when it is a terminal and not a CI log; otherwise undefined. */
  static start(
    stream: TerminalStream,
    options: {
      clock: { now(): number };
      env?: Readonly<Record<string, string | undefined>>;
      intervalMs?: number;
    },
  ): StatusLine | undefined {
    const env = options.env ?? process.env;
    if (!stream.isTTY || env.CI || env.TERM === "dumb") return undefined;
    return new StatusLine(stream, options.clock, options.intervalMs ?? 100);
  }

  /** What the run is doing now; the elapsed time counts from this call. */
  set(text: string): void {
    this.text = text;
    this.since = this.clock.now();
    this.clear();
    this.draw();
  }

  /** Advances the spinner and the elapsed time (the timer calls it). */
  tick(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.clear();
    this.draw();
  }

  /** Removes the line and gives the stream back as it was. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
    this.text = "";
    this.restore();
  }

  private clear(): void {
    if (!this.drawn) return;
    this.raw(CLEAR_LINE);
    this.drawn = false;
  }

  private draw(): void {
    if (!this.text || this.timer === undefined || !this.atLineStart) return;
    const seconds = Math.floor((this.clock.now() - this.since) / 1000);
    let line = `${FRAMES[this.frame] ?? ""} ${this.text} (${seconds}s)`;
    // One terminal row: a wrapped line could not be cleared with one escape.
    // A terminal that reports no size (0, as under `script`) gets the usual 80 columns.
    const width = this.stream.columns || 80;
    if (line.length > width - 1) line = `${line.slice(0, Math.max(0, width - 2))}…`;
    this.raw(line);
    this.drawn = true;
  }
}

function endsWithNewline(chunk: unknown, before: boolean): boolean {
  if (typeof chunk === "string") return chunk.length === 0 ? before : chunk.endsWith("\n");
  if (chunk instanceof Uint8Array) return chunk.length === 0 ? before : chunk[chunk.length - 1] === 0x0a;
  return before;
}
