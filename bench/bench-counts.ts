// A bench's list setting (BENCH_TURNS_CONCURRENCY=10,50,100): whole numbers of at least 1.

export function countsFrom(name: string, fallback: string): number[] {
  return (process.env[name] || fallback).split(',').map((n) => {
    const value = Number(n.trim());
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name} is a comma list of whole numbers; got "${n}"`);
    return value;
  });
}
