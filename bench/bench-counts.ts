// A bench's list setting (BENCH_TURNS_CONCURRENCY=10,50,100): whole numbers of at least 1.

export function countsFrom(name: string, fallback: string): number[] {
  return (process.env[name] || fallback).split(',').map((n) => {
    const value = Number(n.trim());
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name} is a comma list of whole numbers; got "${n}"`);
    return value;
  });
}

/** A bench's setting of one whole number of at least 1 (BENCH_TURN_AT_ONCE=1). */
export function oneCount(name: string, fallback: string): number {
  const counts = countsFrom(name, fallback);
  if (counts.length !== 1) throw new Error(`${name} is one whole number; got "${process.env[name]}"`);
  return counts[0];
}
