package org.solrdedup;

/**
 * XXH3's 64-bit hash with a seed ({@code XXH3_64bits_withSeed} of the XXH3 specification), ported
 * from the scalar code of the {@code xxhash-rust} crate the worker uses; the tests hold it to the
 * worker's values for every length from 0 to 1,100 bytes and several seeds.
 */
final class Xxh3 {
  private Xxh3() {}

  private static final long PRIME32_1 = 0x9E3779B1L;
  private static final long PRIME32_2 = 0x85EBCA77L;
  private static final long PRIME32_3 = 0xC2B2AE3DL;
  private static final long PRIME64_1 = 0x9E3779B185EBCA87L;
  private static final long PRIME64_2 = 0xC2B2AE3D27D4EB4FL;
  private static final long PRIME64_3 = 0x165667B19E3779F9L;
  private static final long PRIME64_4 = 0x85EBCA77C2B2AE63L;
  private static final long PRIME64_5 = 0x27D4EB2F165667C5L;

  private static final int STRIPE_LEN = 64;
  private static final int SECRET_CONSUME_RATE = 8;
  private static final int SECRET_MERGEACCS_START = 11;
  private static final int SECRET_LASTACC_START = 7;
  private static final int SECRET_SIZE_MIN = 136;
  private static final int MID_SIZE_MAX = 240;

  /** The default secret ({@code kSecret}), 192 bytes. */
  private static final byte[] SECRET = bytes(
      0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
      0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
      0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
      0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
      0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
      0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
      0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
      0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
      0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
      0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
      0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
      0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e);

  private static byte[] bytes(int... values) {
    byte[] out = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = (byte) values[i];
    }
    return out;
  }

  private static long u32(byte[] b, int at) {
    return (b[at] & 0xffL) | (b[at + 1] & 0xffL) << 8 | (b[at + 2] & 0xffL) << 16 | (b[at + 3] & 0xffL) << 24;
  }

  private static long u64(byte[] b, int at) {
    return u32(b, at) | u32(b, at + 4) << 32;
  }

  /** The low and high 64 bits of the unsigned 128-bit product, XORed. */
  private static long mul128Fold64(long a, long b) {
    long low = a * b;
    long high = Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    return low ^ high;
  }

  private static long xxh64Avalanche(long h) {
    h ^= h >>> 33;
    h *= PRIME64_2;
    h ^= h >>> 29;
    h *= PRIME64_3;
    return h ^ (h >>> 32);
  }

  private static long avalanche(long h) {
    h ^= h >>> 37;
    h *= 0x165667919E3779F9L;
    return h ^ (h >>> 32);
  }

  private static long strongAvalanche(long h, long len) {
    h ^= Long.rotateLeft(h, 49) ^ Long.rotateLeft(h, 24);
    h *= 0x9FB21C651E98DF25L;
    h ^= (h >>> 35) + len;
    h *= 0x9FB21C651E98DF25L;
    return h ^ (h >>> 28);
  }

  /** {@code XXH3_64bits_withSeed(input[0..len], seed)}. */
  static long hash(byte[] input, int len, long seed) {
    if (len <= 16) {
      return len0to16(input, len, seed);
    } else if (len <= 128) {
      return len17to128(input, len, seed);
    } else if (len <= MID_SIZE_MAX) {
      return len129to240(input, len, seed);
    }
    return longHash(input, len, customSecret(seed));
  }

  static long hash(byte[] input, long seed) {
    return hash(input, input.length, seed);
  }

  private static long len0to16(byte[] in, int len, long seed) {
    if (len > 8) {
      long flip1 = (u64(SECRET, 24) ^ u64(SECRET, 32)) + seed;
      long flip2 = (u64(SECRET, 40) ^ u64(SECRET, 48)) - seed;
      long lo = u64(in, 0) ^ flip1;
      long hi = u64(in, len - 8) ^ flip2;
      long acc = len + Long.reverseBytes(lo) + hi + mul128Fold64(lo, hi);
      return avalanche(acc);
    } else if (len >= 4) {
      long s = seed ^ ((Integer.reverseBytes((int) seed) & 0xffffffffL) << 32);
      long in1 = u32(in, 0);
      long in2 = u32(in, len - 4);
      long flip = (u64(SECRET, 8) ^ u64(SECRET, 16)) - s;
      long in64 = in2 + (in1 << 32);
      return strongAvalanche(in64 ^ flip, len);
    } else if (len > 0) {
      long combo = ((in[0] & 0xffL) << 16) | ((in[len >> 1] & 0xffL) << 24) | (in[len - 1] & 0xffL) | ((long) len << 8);
      long flip = ((u32(SECRET, 0) ^ u32(SECRET, 4)) & 0xffffffffL) + seed;
      return xxh64Avalanche(combo ^ flip);
    }
    return xxh64Avalanche(seed ^ u64(SECRET, 56) ^ u64(SECRET, 64));
  }

  private static long mix16(byte[] in, int at, byte[] secret, int sat, long seed) {
    long lo = u64(in, at) ^ (u64(secret, sat) + seed);
    long hi = u64(in, at + 8) ^ (u64(secret, sat + 8) - seed);
    return mul128Fold64(lo, hi);
  }

  private static long len17to128(byte[] in, int len, long seed) {
    long acc = len * PRIME64_1;
    if (len > 32) {
      if (len > 64) {
        if (len > 96) {
          acc += mix16(in, 48, SECRET, 96, seed);
          acc += mix16(in, len - 64, SECRET, 112, seed);
        }
        acc += mix16(in, 32, SECRET, 64, seed);
        acc += mix16(in, len - 48, SECRET, 80, seed);
      }
      acc += mix16(in, 16, SECRET, 32, seed);
      acc += mix16(in, len - 32, SECRET, 48, seed);
    }
    acc += mix16(in, 0, SECRET, 0, seed);
    acc += mix16(in, len - 16, SECRET, 16, seed);
    return avalanche(acc);
  }

  private static long len129to240(byte[] in, int len, long seed) {
    long acc = len * PRIME64_1;
    int rounds = len / 16;
    int i = 0;
    for (; i < 8; i++) {
      acc += mix16(in, 16 * i, SECRET, 16 * i, seed);
    }
    acc = avalanche(acc);
    for (; i < rounds; i++) {
      acc += mix16(in, 16 * i, SECRET, 16 * (i - 8) + 3, seed);
    }
    acc += mix16(in, len - 16, SECRET, SECRET_SIZE_MIN - 17, seed);
    return avalanche(acc);
  }

  /** The default secret derived from a seed, for inputs over 240 bytes. */
  private static byte[] customSecret(long seed) {
    if (seed == 0) {
      return SECRET;
    }
    byte[] out = new byte[SECRET.length];
    for (int i = 0; i < SECRET.length / 16; i++) {
      long lo = u64(SECRET, 16 * i) + seed;
      long hi = u64(SECRET, 16 * i + 8) - seed;
      for (int b = 0; b < 8; b++) {
        out[16 * i + b] = (byte) (lo >>> (8 * b));
        out[16 * i + 8 + b] = (byte) (hi >>> (8 * b));
      }
    }
    return out;
  }

  private static void accumulate512(long[] acc, byte[] in, int at, byte[] secret, int sat) {
    for (int i = 0; i < 8; i++) {
      long data = u64(in, at + 8 * i);
      long key = data ^ u64(secret, sat + 8 * i);
      acc[i ^ 1] += data;
      acc[i] += (key & 0xffffffffL) * (key >>> 32);
    }
  }

  private static void scramble(long[] acc, byte[] secret, int sat) {
    for (int i = 0; i < 8; i++) {
      long a = acc[i];
      a ^= a >>> 47;
      a ^= u64(secret, sat + 8 * i);
      acc[i] = a * PRIME32_1;
    }
  }

  private static long longHash(byte[] in, int len, byte[] secret) {
    long[] acc = {PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1};
    int stripes = (secret.length - STRIPE_LEN) / SECRET_CONSUME_RATE;
    int block = STRIPE_LEN * stripes;
    int blocks = (len - 1) / block;
    for (int b = 0; b < blocks; b++) {
      for (int s = 0; s < stripes; s++) {
        accumulate512(acc, in, b * block + s * STRIPE_LEN, secret, s * SECRET_CONSUME_RATE);
      }
      scramble(acc, secret, secret.length - STRIPE_LEN);
    }
    int last = ((len - 1) - block * blocks) / STRIPE_LEN;
    for (int s = 0; s < last; s++) {
      accumulate512(acc, in, blocks * block + s * STRIPE_LEN, secret, s * SECRET_CONSUME_RATE);
    }
    accumulate512(acc, in, len - STRIPE_LEN, secret, secret.length - STRIPE_LEN - SECRET_LASTACC_START);
    long result = len * PRIME64_1;
    for (int i = 0; i < 4; i++) {
      int sat = SECRET_MERGEACCS_START + 16 * i;
      result += mul128Fold64(acc[2 * i] ^ u64(secret, sat), acc[2 * i + 1] ^ u64(secret, sat + 8));
    }
    return avalanche(result);
  }
}
