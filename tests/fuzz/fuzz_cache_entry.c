/* libFuzzer harness: the binary cache's entry reader
 * (clr_cache_entry_parse in src/lib/binary_cache.c), which decides what
 * of a file on disk may reach clCreateProgramWithBinary.
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
 *    against another key must be refused. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_whole(data, size, NULL);
  check_whole(data, size, fixed_key);
  check_round_trip(data, size);
  return 0;
}
