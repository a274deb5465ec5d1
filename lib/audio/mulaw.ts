// G.711 μ-law (PCMU), the encoding of Media Streams and of SIP's PCMU, through alawmulaw.
import alawmulaw from 'alawmulaw';

/** μ-law bytes (one per sample) to 16-bit linear PCM. */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  return alawmulaw.mulaw.decode(bytes);
}

/** 16-bit linear PCM to μ-law bytes (one per sample). */
export function encodeMulaw(samples: Int16Array): Uint8Array {
  return alawmulaw.mulaw.encode(samples);
}
