/*
 * The attacker's scrypt (RFC 7914, r = 8, p = 1): LANES nonces at once, one per 32-bit lane of a SIMD
 * register (AVX-512: 16 lanes, AVX2: 8), beside OpenSSL's one-at-a-time EVP_PBE_scrypt. Both PBKDF2 passes
 * go through OpenSSL; ROMix runs in the lanes. Each lane keeps its own 128·r·N bytes (V laid out lane by
 * lane, so a lane's block is contiguous); the second loop's data-dependent reads are gathers.
 *
 *   scrypt-lanes bench <N> <ms> lanes|openssl   JSON {hashes, ms, cpuMs}: hashes per CPU-second
 *   scrypt-lanes hash <N> <salt hex> <first> <n> lanes|openssl   one line per nonce: nonce and hash (hex)
 *   scrypt-lanes solve <N> <salt hex> <target> <count>   JSON {nonces, hashes, attempts}: a puzzle solved
 *
 * Build: cc -O3 -march=x86-64-v4 (AVX-512: 16 lanes, or -DLANES=8 for 8 in 256-bit registers with AVX-512's
 * rotate) or -march=x86-64-v3 (AVX2, 8 lanes) scrypt-lanes.c -lcrypto
 */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#ifndef LANES
#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX2__)
#define LANES 8
#else
#define LANES 4
#endif
#endif

#define R 8
#define WORDS (32 * R) /* 32-bit words in one 128·r-byte block */

typedef uint32_t vec __attribute__((vector_size(4 * LANES)));

static double now_ms(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

/* Salsa20/8 on 16 words, every lane at once: b = salsa(b xor x), in place on b. */
static inline void salsa8_xor(vec b[16], const vec x[16]) {
  vec w[16];
  /* b keeps the rounds' input in memory, so the rounds have every register to themselves */
  for (int i = 0; i < 16; i++) w[i] = b[i] ^= x[i];
  for (int i = 0; i < 8; i += 2) {
#define QR(a, b_, c, d)            \
  w[b_] ^= ROTL(w[a] + w[d], 7);   \
  w[c] ^= ROTL(w[b_] + w[a], 9);   \
  w[d] ^= ROTL(w[c] + w[b_], 13);  \
  w[a] ^= ROTL(w[d] + w[c], 18);
    QR(0, 4, 8, 12) QR(5, 9, 13, 1) QR(10, 14, 2, 6) QR(15, 3, 7, 11)
    QR(0, 1, 2, 3) QR(5, 6, 7, 4) QR(10, 11, 8, 9) QR(15, 12, 13, 14)
#undef QR
  }
  for (int i = 0; i < 16; i++) b[i] += w[i];
}

/* BlockMix with r = 8: y = BlockMix(x), lanes in parallel. */
static inline void blockmix(vec *restrict y, const vec *restrict x) {
  vec t[16];
  memcpy(t, x + (2 * R - 1) * 16, sizeof t);
  for (int i = 0; i < 2 * R; i++) {
    salsa8_xor(t, x + i * 16);
    memcpy(y + ((i & 1) * R + i / 2) * 16, t, sizeof t);
  }
}

/* Lane l's word w of block j, V laid out [lane][j][word]. */
static inline size_t vindex(int lane, uint32_t j, int w, uint32_t n) {
  return ((size_t)lane * n + j) * WORDS + w;
}

/* ROMix for LANES passwords: b holds each lane's 128·r bytes from PBKDF2, overwritten with the result. */
static void romix_lanes(uint8_t b[LANES][128 * R], uint32_t n, uint32_t *v) {
  vec x[WORDS], y[WORDS];
  for (int w = 0; w < WORDS; w++)
    for (int l = 0; l < LANES; l++) {
      uint32_t word;
      memcpy(&word, b[l] + 4 * w, 4); /* little-endian words, as RFC 7914 */
      x[w][l] = word;
    }
  for (uint32_t i = 0; i < n; i++) {
    /* plain stores: on the machines measured, a 16-wide scatter cost more than the whole BlockMix */
    for (int l = 0; l < LANES; l++) {
      uint32_t *dst = v + vindex(l, i, 0, n);
      for (int w = 0; w < WORDS; w++) dst[w] = x[w][l];
    }
    blockmix(y, x);
    memcpy(x, y, sizeof x);
  }
  for (uint32_t i = 0; i < n; i++) {
    vec j = x[(2 * R - 1) * 16] & (n - 1);
#if defined(__AVX512F__) && LANES == 16
    __m512i base = _mm512_add_epi32(
        _mm512_mullo_epi32(_mm512_loadu_si512(&j), _mm512_set1_epi32(WORDS)),
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32((int)(n * WORDS))));
    for (int w = 0; w < WORDS; w++) {
      __m512i g = _mm512_i32gather_epi32(_mm512_add_epi32(base, _mm512_set1_epi32(w)), v, 4);
      vec gv;
      memcpy(&gv, &g, sizeof gv);
      x[w] ^= gv;
    }
#elif defined(__AVX2__) && LANES == 8
    __m256i base = _mm256_add_epi32(
        _mm256_mullo_epi32(_mm256_loadu_si256((const __m256i *)&j), _mm256_set1_epi32(WORDS)),
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)(n * WORDS))));
    for (int w = 0; w < WORDS; w++) {
      __m256i g = _mm256_i32gather_epi32((const int *)v, _mm256_add_epi32(base, _mm256_set1_epi32(w)), 4);
      vec gv;
      memcpy(&gv, &g, sizeof gv);
      x[w] ^= gv;
    }
#else
    for (int w = 0; w < WORDS; w++)
      for (int l = 0; l < LANES; l++) x[w][l] ^= v[vindex(l, j[l], w, n)];
#endif
    blockmix(y, x);
    memcpy(x, y, sizeof x);
  }
  for (int w = 0; w < WORDS; w++)
    for (int l = 0; l < LANES; l++) {
      uint32_t word = x[w][l];
      memcpy(b[l] + 4 * w, &word, 4);
    }
}

static void nonce_bytes(uint32_t nonce, uint8_t out[4]) {
  out[0] = nonce >> 24, out[1] = nonce >> 16, out[2] = nonce >> 8, out[3] = nonce;
}

/* scrypt(nonce, salt) for LANES consecutive nonces from `first`: 32 bytes each into out. */
static void scrypt_lanes(uint32_t first, const uint8_t *salt, size_t salt_len, uint32_t n, uint32_t *v,
                         uint8_t out[LANES][32]) {
  static uint8_t b[LANES][128 * R];
  uint8_t pw[4];
  for (int l = 0; l < LANES; l++) {
    nonce_bytes(first + l, pw);
    PKCS5_PBKDF2_HMAC((const char *)pw, 4, salt, (int)salt_len, 1, EVP_sha256(), 128 * R, b[l]);
  }
  romix_lanes(b, n, v);
  for (int l = 0; l < LANES; l++) {
    nonce_bytes(first + l, pw);
    PKCS5_PBKDF2_HMAC((const char *)pw, 4, b[l], 128 * R, 1, EVP_sha256(), 32, out[l]);
  }
}

static void scrypt_openssl(uint32_t nonce, const uint8_t *salt, size_t salt_len, uint32_t n, uint8_t out[32]) {
  uint8_t pw[4];
  nonce_bytes(nonce, pw);
  if (!EVP_PBE_scrypt((const char *)pw, 4, salt, salt_len, n, R, 1, 0x7fffffff, out, 32)) {
    fprintf(stderr, "EVP_PBE_scrypt failed\n");
    exit(1);
  }
}

static size_t from_hex(const char *hex, uint8_t *out, size_t max) {
  size_t len = strlen(hex) / 2;
  if (len > max) len = max;
  for (size_t i = 0; i < len; i++) sscanf(hex + 2 * i, "%2hhx", &out[i]);
  return len;
}

static uint32_t *alloc_v(uint32_t n) {
  uint32_t *v = aligned_alloc(64, (size_t)LANES * n * WORDS * 4);
  if (!v) exit(2);
  return v;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: see the comment at the top of scrypt-lanes.c\n");
    return 2;
  }
  uint32_t n = (uint32_t)strtoul(argv[2], 0, 10);
  if (n < 2 || (n & (n - 1))) return 2;
  uint8_t salt[64] = {0}, out[LANES][32];
  if (!strcmp(argv[1], "bench") && argc == 5) {
    double budget = atof(argv[3]);
    int lanes = !strcmp(argv[4], "lanes");
    uint32_t *v = lanes ? alloc_v(n) : 0;
    /* one warm-up round, as the browser side gets */
    if (lanes) scrypt_lanes(0xffff0000u, salt, 16, n, v, out);
    else scrypt_openssl(0xffff0000u, salt, 16, n, out[0]);
    double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t hashes = 0;
    while (hashes < 2 || now_ms(CLOCK_MONOTONIC) - w0 < budget) {
      if (lanes) scrypt_lanes((uint32_t)hashes, salt, 16, n, v, out), hashes += LANES;
      else scrypt_openssl((uint32_t)hashes, salt, 16, n, out[0]), hashes++;
    }
    printf("{\"hashes\":%llu,\"ms\":%.3f,\"cpuMs\":%.3f,\"lanes\":%d}\n", (unsigned long long)hashes,
           now_ms(CLOCK_MONOTONIC) - w0, now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0, lanes ? LANES : 1);
    return 0;
  }
  if (!strcmp(argv[1], "hash") && argc == 7) {
    size_t sl = from_hex(argv[3], salt, sizeof salt);
    uint32_t first = (uint32_t)strtoul(argv[4], 0, 10), count = (uint32_t)strtoul(argv[5], 0, 10);
    int lanes = !strcmp(argv[6], "lanes");
    uint32_t *v = lanes ? alloc_v(n) : 0;
    for (uint32_t i = 0; i < count; i += lanes ? LANES : 1) {
      if (lanes) scrypt_lanes(first + i, salt, sl, n, v, out);
      else scrypt_openssl(first + i, salt, sl, n, out[0]);
      for (int l = 0; l < (lanes ? LANES : 1) && i + l < count; l++) {
        printf("%u ", first + i + l);
        for (int k = 0; k < 32; k++) printf("%02x", out[l][k]);
        printf("\n");
      }
    }
    return 0;
  }
  if (!strcmp(argv[1], "solve") && argc == 6) {
    size_t sl = from_hex(argv[3], salt, sizeof salt);
    uint64_t target = strtoull(argv[4], 0, 10);
    uint32_t count = (uint32_t)strtoul(argv[5], 0, 10), found = 0;
    uint32_t *v = alloc_v(n);
    printf("{\"nonces\":[");
    char hashes[4096] = "";
    uint64_t attempts = 0;
    for (uint32_t first = 0; found < count; first += LANES) {
      scrypt_lanes(first, salt, sl, n, v, out);
      attempts += LANES;
      for (int l = 0; l < LANES && found < count; l++) {
        uint64_t prefix = ((uint64_t)out[l][0] << 24) | (out[l][1] << 16) | (out[l][2] << 8) | out[l][3];
        if (prefix >= target) continue;
        printf("%s%u", found ? "," : "", first + l);
        char hex[20];
        for (int k = 0; k < 8; k++) sprintf(hex + 2 * k, "%02x", out[l][k]);
        if (strlen(hashes) + 24 < sizeof hashes)
          strcat(hashes, found ? ",\"" : "\""), strcat(hashes, hex), strcat(hashes, "\"");
        found++;
      }
    }
    printf("],\"hashes\":[%s],\"attempts\":%llu,\"lanes\":%d}\n", hashes, (unsigned long long)attempts, LANES);
    return 0;
  }
  fprintf(stderr, "usage: see the comment at the top of scrypt-lanes.c\n");
  return 2;
}
