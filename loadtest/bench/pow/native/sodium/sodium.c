/*
 * Native baseline through libsodium, whose Argon2id picks AVX-512F, AVX2 or SSSE3 code at run time and whose
 * scrypt uses SSE2: the fastest single-core CPU code Debian ships. Usage: powbench-sodium argon2id M_KIB T MS
 * or powbench-sodium scrypt N MS. Prints {"hashes":N,"ms":T,"cpuMs":C}. Build: cc -O2 sodium.c -lsodium.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_ms(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (sodium_init() < 0 || argc < 4) return 2;
  int argon = strcmp(argv[1], "argon2id") == 0;
  unsigned long long a = strtoull(argv[2], NULL, 10);
  unsigned long long t = argon ? strtoull(argv[3], NULL, 10) : 0;
  double ms = atof(argv[argon ? 4 : 3]);
  unsigned char salt[16] = {0}, pwd[4], out[32];
  unsigned long hashes = 0, sink = 0;
  double start = clock_ms(CLOCK_MONOTONIC), cpu0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID), elapsed = 0;
  while ((elapsed = clock_ms(CLOCK_MONOTONIC) - start) < ms) {
    pwd[0] = hashes >> 24; pwd[1] = hashes >> 16; pwd[2] = hashes >> 8; pwd[3] = hashes;
    int rc = argon ? crypto_pwhash(out, 32, (const char *)pwd, 4, salt, t, a * 1024, crypto_pwhash_ALG_ARGON2ID13)
                   : crypto_pwhash_scryptsalsa208sha256_ll(pwd, 4, salt, 16, a, 8, 1, out, 32);
    if (rc != 0) return 1;
    sink ^= out[0];
    hashes++;
  }
  double cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  printf("{\"hashes\":%lu,\"ms\":%.3f,\"cpuMs\":%.3f,\"sink\":%lu}\n", hashes, elapsed, cpu, sink);
  return 0;
}
