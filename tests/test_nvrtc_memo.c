/* The NVRTC version memo's parser (uk__nvrtc_memo_parse): what the disk
 * cache's memo file must hold for a warm process to skip loading NVRTC.
 * Plain decimal numbers only; anything else is "not a memo" (NVRTC is then
 * loaded and asked), never a wrong version. */
#include <stdio.h>
#include <string.h>

#include "runtime/nvrtc_lib.h"
#include "testutil.h"

typedef struct {
  const char *text;
  int version; /* 0: not a memo */
  int narchs;
  int archs[4]; /* the first ones */
} memo_case;

static const memo_case cases[] = {
    {"13000\n75 80 86 87 88 89 90 100 103 110 120 121\n", 13000, 12, {75, 80, 86, 87}},
    {"12080\n90\n", 12080, 1, {90}},
    {"1000\n10 100000\n", 1000, 2, {10, 100000}},
    {"999999\n52 53\n", 999999, 2, {52, 53}},
    {"13000\n90 100", 0, 0, {0}},            /* cut short: no final newline */
    {"13000\n", 0, 0, {0}},                  /* no architecture */
    {"13000\n\n", 0, 0, {0}},
    {"13000", 0, 0, {0}},
    {"", 0, 0, {0}},
    {"999\n90\n", 0, 0, {0}},                /* version out of range */
    {"1000000\n90\n", 0, 0, {0}},
    {"+13000\n90\n", 0, 0, {0}},             /* signs and blanks: not ours */
    {" 13000\n90\n", 0, 0, {0}},
    {"13000\n 90\n", 0, 0, {0}},
    {"13000\n90  100\n", 0, 0, {0}},
    {"13000\n90 \n", 0, 0, {0}},
    {"13000\n-90\n", 0, 0, {0}},
    {"13000\n9 90\n", 0, 0, {0}},            /* architecture out of range */
    {"13000\n90 100001\n", 0, 0, {0}},
    {"13000\n90x\n", 0, 0, {0}},
    {"13000x\n90\n", 0, 0, {0}},
    {"13000\n1234567890\n", 0, 0, {0}},      /* too many digits: no overflow */
    {"0000013000\n90\n", 0, 0, {0}},
    {"13000\r\n90\r\n", 0, 0, {0}},
};

static void test_table(void) {
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const memo_case *c = &cases[k];
    int version = -7, archs[64];
    memset(archs, 0x5a, sizeof archs);
    int n = uk__nvrtc_memo_parse(c->text, &version, archs, 64);
    CHECK(n == c->narchs);
    if (n != c->narchs) fprintf(stderr, "  case %zu: '%s' gave %d architectures\n", k, c->text, n);
    if (c->version) {
      CHECK(version == c->version);
      for (int j = 0; j < 4 && j < c->narchs; j++) CHECK(archs[j] == c->archs[j]);
      CHECK(archs[c->narchs] == 0x5a5a5a5a); /* nothing written past the count */
    } else {
      CHECK(version == -7); /* untouched when it is not a memo */
    }
  }
}

/* The architectures fill at most cap entries: one more is not a memo. The
 * text is what uk__nvrtc_remember writes ("%d\n", then "%d " ... "%d\n"). */
static void test_cap(void) {
  char text[1024];
  for (int count = 1; count <= 9; count++) {
    int len = snprintf(text, sizeof text, "%d\n", 12000 + 10 * count);
    for (int j = 0; j < count; j++)
      len += snprintf(text + len, sizeof text - (size_t)len, "%d%c", 50 + 7 * j, j + 1 < count ? ' ' : '\n');
    int version = 0, archs[8];
    memset(archs, 0, sizeof archs);
    int n = uk__nvrtc_memo_parse(text, &version, archs, 8);
    if (count <= 8) {
      CHECK(n == count && version == 12000 + 10 * count);
      for (int j = 0; j < count; j++) CHECK(archs[j] == 50 + 7 * j);
    } else {
      CHECK(n == 0);
    }
  }
}

int main(void) {
  test_table();
  test_cap();
  return ut_finish("test_nvrtc_memo");
}
