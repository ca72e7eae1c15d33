/* libFuzzer harness: the binary cache's entry reader
 * (clr_cache_entry_parse in src/lib/core/binary_cache.c), which decides
 * what of a file on disk may reach clCreateProgramWithBinary, and the
 * check of the payload's own format behind it (clr_cache_payload_check),
 * since an entry with a right checksum can still lie.
 *
 * 1. The input as a whole entry file, checked against no key and against
 *    a fixed key.  An accepted entry must be exactly header + key +
 *    payload with lengths within their limits, its payload inside the
 *    input, and a header rebuilt from its key and payload must equal the
 *    input's (so only an entry the writer could have written passes).  A
 *    refused one gives a reason and no payload.
 * 2. The input split into a key and a payload: the entry the writer makes
 *    of them must parse back to them, and the same entry with one byte
 *    changed (position and bits from the input), truncated, or checked
 *    against another key must be refused.
 * 3. The payload of an accepted entry (else the whole input) through the
 *    format check as PoCL 3.1, PoCL 5, another PoCL, NVIDIA and another
 *    driver see it: never a read outside it (ASan), a reason for every
 *    refusal, and what is accepted has the format's shape: a PoCL 3.1
 *    container none of whose strict prefixes passes, PTX text.
 *
 * Structure-aware (LLVMFuzzerCustomMutator, under libFuzzer): the mutator
 * keeps the input a valid entry, changing only what follows the header
 * (bytes of the payload, an aligned length field set to an extreme, a cut,
 * an extension) and then fixing the lengths and the checksum, so the
 * inputs reach the payload check as a crafted entry would. */
#include "binary_cache.h"
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char fixed_key[] = "platform=fuzz\ndevice=fuzz\n";

static void check_whole(const uint8_t *data, size_t size, const char *key) {
  static const unsigned char unset;
  const unsigned char *payload = &unset; /* the parser must clear it */
  size_t payload_len = 1;
  const char *why = NULL;
  int ok = clr_cache_entry_parse(data, size, key, &payload, &payload_len, &why);
  if (!ok) {
    if (payload != NULL || payload_len != 0 || why == NULL || why[0] == '\0')
      abort();
    return;
  }
  if (why != NULL || size < CLR_CACHE_HEADER_SIZE || payload == NULL ||
      payload_len == 0 || payload_len > CLR_CACHE_MAX_PAYLOAD ||
      payload < data + CLR_CACHE_HEADER_SIZE ||
      payload + payload_len != data + size)
    abort();
  size_t key_len = (size_t)(payload - data) - CLR_CACHE_HEADER_SIZE;
  if (key_len == 0 || key_len > CLR_CACHE_MAX_KEY)
    abort();
  if (key && (key_len != strlen(key) ||
              memcmp(data + CLR_CACHE_HEADER_SIZE, key, key_len) != 0))
    abort();
  unsigned char hdr[CLR_CACHE_HEADER_SIZE];
  clr_cache_entry_header(hdr, (const char *)data + CLR_CACHE_HEADER_SIZE,
                         key_len, payload, payload_len);
  if (memcmp(hdr, data, sizeof hdr) != 0)
    abort();
}

static void check_round_trip(const uint8_t *data, size_t size) {
  if (size < 4)
    return;
  /* data[0]: where the key ends; data[1..2]: which byte to change;
   * data[3]: how (never 0, so the byte does change). */
  size_t rest = size - 4;
  if (rest < 2)
    return;
  size_t key_len = 1 + (size_t)data[0] % (rest - 1 < 64 ? rest - 1 : 64);
  const uint8_t *key_bytes = data + 4;
  const uint8_t *payload = key_bytes + key_len;
  size_t payload_len = rest - key_len;
  /* The key is text (NUL-terminated for the comparison): no NUL in it. */
  char *key = malloc(key_len + 1);
  size_t len = CLR_CACHE_HEADER_SIZE + key_len + payload_len;
  unsigned char *entry = malloc(len);
  if (!key || !entry)
    abort();
  for (size_t i = 0; i < key_len; i++)
    key[i] = key_bytes[i] ? (char)key_bytes[i] : 'k';
  key[key_len] = '\0';
  clr_cache_entry_header(entry, key, key_len, payload, payload_len);
  memcpy(entry + CLR_CACHE_HEADER_SIZE, key, key_len);
  memcpy(entry + CLR_CACHE_HEADER_SIZE + key_len, payload, payload_len);

  const unsigned char *got = NULL;
  size_t got_len = 0;
  const char *why = NULL;
  if (!clr_cache_entry_parse(entry, len, key, &got, &got_len, &why) ||
      got_len != payload_len || memcmp(got, payload, payload_len) != 0)
    abort(); /* the writer's entry must read back */
  if (clr_cache_entry_parse(entry, len, fixed_key, &got, &got_len, &why) &&
      strcmp(key, fixed_key) != 0)
    abort(); /* another key: a miss */
  if (clr_cache_entry_parse(entry, len - 1, key, &got, &got_len, &why))
    abort(); /* truncated by one byte */

  size_t pos = (((size_t)data[1] << 8) | data[2]) % len;
  unsigned char flip = data[3] ? data[3] : 0x01;
  entry[pos] ^= flip;
  if (clr_cache_entry_parse(entry, len, key, &got, &got_len, &why))
    abort(); /* any changed byte must be detected */
  free(entry);
  free(key);
}

/* The format check of payload under one platform and driver. */
static int check_payload_as(const char *platform, const char *driver,
                            const uint8_t *bin, size_t len) {
  const char *why = "unset";
  int ok = clr_cache_payload_check(platform, driver, bin, len, &why);
  if (ok ? why != NULL : (why == NULL || why[0] == '\0'))
    abort(); /* a reason exactly for each refusal */
  return ok;
}

static void check_payload(const uint8_t *bin, size_t len) {
  static const char pocl[] = "Portable Computing Language";
  if (check_payload_as(pocl, "3.1+debian", bin, len)) {
    /* Accepted as PoCL 3.1's container (version 9): its shape, and a cut
     * one never passes (the walk must end exactly at the end). */
    if (len < 85 || memcmp(bin, "poclbin", 8) != 0 || bin[16] != 9 ||
        bin[17] != 0 || bin[18] != 0 || bin[19] != 0)
      abort();
    if (check_payload_as(pocl, "3.1+debian", bin, len - 1) ||
        check_payload_as(pocl, "3.1+debian", bin, len / 2))
      abort();
  }
  check_payload_as(pocl, "5.0+debian", bin, len);
  check_payload_as(pocl, "", bin, len);
  if (check_payload_as("NVIDIA CUDA", "535.1", bin, len)) {
    size_t n = len;
    while (n > 0 && bin[n - 1] == '\0')
      n--;
    if (len - n > 16 || memchr(bin, '\0', n) != NULL ||
        (memcmp(bin, "//", 2) != 0 && memcmp(bin, ".version", 8) != 0))
      abort();
  }
  check_payload_as("Other", "1.0", bin, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_whole(data, size, NULL);
  check_whole(data, size, fixed_key);
  check_round_trip(data, size);
  const unsigned char *payload = NULL;
  size_t payload_len = 0;
  if (clr_cache_entry_parse(data, size, NULL, &payload, &payload_len, NULL))
    check_payload(payload, payload_len);
  else
    check_payload(data, size);
  return 0;
}

/* ---- the structure-aware mutator (used by libFuzzer only) */

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
    __attribute__((weak));

static uint32_t next_rand(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

/* The input as an entry (its key and payload when it has the header's
 * shape, else a fixed key and the input as payload); its payload mutated;
 * the header rewritten to agree (lengths, checksum). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed) {
  uint32_t r = seed;
  const uint8_t *key = (const uint8_t *)fixed_key;
  size_t key_len = sizeof fixed_key - 1;
  const uint8_t *pay = data;
  size_t pay_len = size;
  if (size >= CLR_CACHE_HEADER_SIZE && memcmp(data, "CLRBIN2\n", 8) == 0) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; i--)
      k = (k << 8) | data[8 + i];
    if (k >= 1 && k <= CLR_CACHE_MAX_KEY && k <= size - CLR_CACHE_HEADER_SIZE) {
      key = data + CLR_CACHE_HEADER_SIZE;
      key_len = (size_t)k;
      pay = key + key_len;
      pay_len = size - CLR_CACHE_HEADER_SIZE - key_len;
    }
  }
  if (max_size < CLR_CACHE_HEADER_SIZE + key_len + 1)
    return size;
  size_t room = max_size - CLR_CACHE_HEADER_SIZE - key_len;
  uint8_t *k_copy = malloc(key_len), *p = malloc(room);
  if (!k_copy || !p)
    abort();
  memcpy(k_copy, key, key_len);
  size_t n = pay_len < room ? pay_len : room;
  memcpy(p, pay, n);
  switch (next_rand(&r) % 4) {
  case 0: /* bytes, by libFuzzer's own mutations */
    if (LLVMFuzzerMutate)
      n = LLVMFuzzerMutate(p, n, room);
    break;
  case 1: /* a length field at an extreme */
    if (n >= 8) {
      static const uint64_t extremes[] = {
          0, 1, 0x7fffffff, 0xffffffff, 1ULL << 32, 1ULL << 63, UINT64_MAX};
      size_t at = (next_rand(&r) % (n - 3)) & ~(size_t)3;
      uint64_t v = extremes[next_rand(&r) % 7];
      int bytes = (next_rand(&r) & 1) && at + 8 <= n ? 8 : 4;
      if (next_rand(&r) % 4 == 0)
        v = n - at; /* "the rest", off by the field itself */
      for (int i = 0; i < bytes; i++)
        p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
    }
    break;
  case 2: /* cut */
    if (n > 1)
      n = 1 + next_rand(&r) % (n - 1);
    break;
  default: /* extended by copies of its own bytes */
    while (n < room && next_rand(&r) % 8 != 0) {
      p[n] = n ? p[next_rand(&r) % n] : 0;
      n++;
    }
    break;
  }
  if (n == 0)
    p[n++] = 0;
  clr_cache_entry_header(data, (const char *)k_copy, key_len, p, n);
  memcpy(data + CLR_CACHE_HEADER_SIZE, k_copy, key_len);
  memcpy(data + CLR_CACHE_HEADER_SIZE + key_len, p, n);
  free(k_copy);
  free(p);
  return CLR_CACHE_HEADER_SIZE + key_len + n;
}
