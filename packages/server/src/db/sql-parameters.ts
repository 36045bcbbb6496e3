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

  list(values: readonly unknown[]): string {
    return values.map((v) => this.one(v)).join(', ')
  }
}
