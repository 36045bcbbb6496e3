/**
 * The parameters of a statement written as SQL text, in order of appearance: `$1, $2, …` for
 * PostgreSQL, `?` for SQLite.
 */
export class Parameters {
  readonly values: unknown[] = []
  constructor(private readonly numbered: boolean) {}

  one(value: unknown): string {
    this.values.push(value)
    return this.numbered ? `$${this.values.length}` : '?'
  }

  /**
   * A `limit` or `offset` value. SQLite (3.4x and later) reads a bound limit's value while
   * planning and marks the statement to be planned again whenever that parameter is bound
   * anew, which a cached statement is on every run: `? + 0` is the same number, but not a
   * bare parameter, so the plan is kept (about 10 µs per statement; docs/benchmarks.md).
   */
  rows(value: number): string {
    const parameter = this.one(value)
    return this.numbered ? parameter : `${parameter} + 0`
  }

  list(values: readonly unknown[]): string {
    return values.map((v) => this.one(v)).join(', ')
  }
}
