// G.711 A-law (PCMA), the other codec SIP trunks offer, through alawmulaw.
import alawmulaw from 'alawmulaw';

/** A-law bytes (one per sample) to 16-bit linear PCM. */
export function decodeAlaw(bytes: Uint8Array): Int16Array {
  return alawmulaw.alaw.decode(bytes);
}

/** 16-bit linear PCM to A-law bytes (one per sample). */
export function encodeAlaw(samples: Int16Array): Uint8Array {
  return alawmulaw.alaw.encode(samples);
}
