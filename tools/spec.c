/* Kernel specs: a small human-readable file of `field: value` lines holding
 * the definition strings of a kernel and the calls to make of it. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

const char cli_spec_help[] =
    "kernel specs\n"
    "  A spec is a text file of `field: value` lines. `#` starts a comment line.\n"
    "  A value that spans lines is written `field: |` followed by lines indented\n"
    "  deeper than the field (the common indentation is removed). Field names take\n"
    "  `-` or `_`. Every field can also be given on the command line as\n"
    "  --FIELD VALUE (overriding the file); short forms: --in, --out, --op, --map,\n"
    "  --reduce, --post-map, --name-expr and --option (these two append).\n"
    "\n"
    "  kind: elementwise | reduction | fusion | module   (default elementwise)\n"
    "  name: the kernel name, a C identifier (default `kernel`)\n"
    "  elementwise: in_params, out_params, operation (required); preamble,\n"
    "               loop_prep, after_loop, no_reduce_dims (true/false), size, block_size\n"
    "  reduction:   in_params, out_params, map_expr, reduce_expr, post_map_expr\n"
    "               (required); identity, reduce_type, preamble, block_reduce (ukern\n"
    "               (default) or cub: cub::BlockReduce combines a block); per call: axes\n"
    "               (`0, 2`, `all` (default) or `none`), keepdims (true/false)\n"
    "  fusion:      in_params (input names: `x, y`), out_params (output names),\n"
    "               program (NumPy statements `name = expr` separated by `;` or new\n"
    "               lines, reductions with axis= and keepdims= inside; see\n"
    "               uk_fusion_create) (required); preamble, block_size. The dtypes and\n"
    "               shapes come from `inputs`; untyped scalars are weak Python scalars.\n"
    "               gen prints every kernel of the plan; compile lists them all.\n"
    "  module:      source (CUDA text) or file (a .cu path, relative to the spec);\n"
    "               name_expressions (comma-separated, e.g. `scale<float>, scale<double>`)\n"
    "  options:     NVRTC options, separated by spaces (any kind)\n"
    "  inputs:      one call per line: arguments separated by commas, each an array\n"
    "               DTYPE[SHAPE] (`float32[1024,1024]`, `f8[]` is 0-d), an untyped\n"
    "               scalar (`2`, `0.5`, `true`) or a typed one (`float32(0.5)`).\n"
    "               gen, compile and run use the first line; precompile every line.\n"
    "  outputs:     output arrays DTYPE[SHAPE] (default: ukern allocates them)\n"
    "\n"
    "  example (squared_diff.uk):\n"
    "    kind: elementwise\n"
    "    name: squared_diff\n"
    "    in_params: T x, T y\n"
    "    out_params: T z\n"
    "    operation: z = (x - y) * (x - y)\n"
    "    inputs: |\n"
    "      float32[4096,4096], float32[4096]\n"
    "      float64[1000], float64(0.5)\n"
    "\n"
    "  example (row_dist.uk):\n"
    "    kind: fusion\n"
    "    name: row_dist\n"
    "    in_params: x, y\n"
    "    out_params: d\n"
    "    program: |\n"
    "      t = x - y\n"
    "      d = sqrt(sum(t * t, axis=-1))\n"
    "    inputs: float32[4096,4096], float32[4096]\n";

const char cli_module_run_hint[] =
    "  a module's kernels take C arguments that a spec cannot describe: `ukern compile`\n"
    "  and `ukern precompile` take a module; run its kernels from a program (load the\n"
    "  module, get the function, launch it: see examples/raw_module_templates.c).\n";

static const char *const field_names[] = {
#define CLI_FIELD_NAME_(f) #f,
    CLI_SPEC_FIELDS(CLI_FIELD_NAME_)
#undef CLI_FIELD_NAME_
};

/* Which kinds accept a field: bit 1 << kind. */
#define EW (1 << CLI_ELEMENTWISE)
#define RED (1 << CLI_REDUCTION)
#define MOD (1 << CLI_MODULE)
#define FUS (1 << CLI_FUSION)
static const int field_kinds[F_COUNT_] = {
    [F_kind] = EW | RED | MOD | FUS, [F_name] = EW | RED | MOD | FUS, [F_in_params] = EW | RED | FUS,
    [F_out_params] = EW | RED | FUS, [F_operation] = EW,              [F_preamble] = EW | RED | FUS,
    [F_loop_prep] = EW,              [F_after_loop] = EW,             [F_no_reduce_dims] = EW,
    [F_map_expr] = RED,              [F_reduce_expr] = RED,           [F_post_map_expr] = RED,
    [F_identity] = RED,              [F_reduce_type] = RED,           [F_source] = MOD,
    [F_file] = MOD,                  [F_name_expressions] = MOD,      [F_options] = EW | RED | MOD | FUS,
    [F_inputs] = EW | RED | FUS,     [F_outputs] = EW | RED | FUS,    [F_size] = EW,
    [F_block_size] = EW | FUS,       [F_axes] = RED,                  [F_keepdims] = RED,
    [F_program] = FUS,               [F_block_reduce] = RED,
};
static const char *const kind_names[CLI_KINDS_] = {"elementwise", "reduction", "module", "fusion"};

static const struct {
  const char *flag;
  cli_field field;
} aliases[] = {
    {"in", F_in_params},     {"out", F_out_params},   {"op", F_operation},
    {"map", F_map_expr},     {"reduce", F_reduce_expr}, {"post-map", F_post_map_expr},
    {"name-expr", F_name_expressions}, {"option", F_options}, {"prog", F_program},
};

/* Edit distance, for "did you mean". */
static int distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 40 || lb > 40) return 99;
  int row[41];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (row[j] + 1 < best) best = row[j] + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

static int find_field(const char *key) {
  char norm[64];
  size_t n = strlen(key);
  if (n >= sizeof norm) return -1;
  for (size_t i = 0; i <= n; i++) norm[i] = key[i] == '-' ? '_' : key[i];
  for (int f = 0; f < F_COUNT_; f++)
    if (!strcmp(norm, field_names[f])) return f;
  return -1;
}

static void unknown_field(const char *where, const char *key) {
  const char *best = NULL;
  int bd = 4;
  for (int f = 0; f < F_COUNT_; f++) {
    int d = distance(key, field_names[f]);
    if (d < bd) bd = d, best = field_names[f];
  }
  if (best) fprintf(stderr, "%s: unknown field '%s' (did you mean '%s'?)\n", where, key, best);
  else fprintf(stderr, "%s: unknown field '%s' (`ukern gen --help` lists the fields)\n", where, key);
}

/* From the file, a field already given on the command line keeps the
 * command line's value (options and name expressions: the file's come first). */
static int set_field(cli_spec *s, int f, const char *value, const char *where, int from_file) {
  int list = f == F_options || f == F_name_expressions;
  if (from_file && s->f[f] && !s->from_cmd[f]) {
    fprintf(stderr, "%s: field '%s' given twice\n", where, field_names[f]);
    return CLI_USAGE;
  }
  if (from_file && s->f[f] && !list) return CLI_OK;
  char *v;
  if (s->f[f] && list) {
    const char *first = from_file ? value : s->f[f], *second = from_file ? s->f[f] : value;
    size_t a = strlen(first), b = strlen(second);
    v = malloc(a + b + 2);
    if (v) {
      memcpy(v, first, a);
      v[a] = f == F_options ? ' ' : ',';
      memcpy(v + a + 1, second, b + 1);
    }
  } else {
    v = strdup(value);
  }
  if (!v) {
    fprintf(stderr, "ukern: out of memory\n");
    return CLI_FAIL;
  }
  free(s->f[f]);
  s->f[f] = v;
  if (!from_file) s->from_cmd[f] = 1;
  return CLI_OK;
}

int cli_spec_set(cli_spec *s, const char *key, const char *value) {
  int f = find_field(key);
  if (f < 0) {
    unknown_field(s->origin[0] ? s->origin : "command line", key);
    return CLI_USAGE;
  }
  return set_field(s, f, value, "command line", 0);
}

int cli_spec_flag(cli_spec *s, int argc, char **argv, int *k) {
  const char *a = argv[*k];
  if (strncmp(a, "--", 2) != 0) return 0;
  int f = -1;
  for (size_t j = 0; j < sizeof aliases / sizeof *aliases && f < 0; j++)
    if (!strcmp(a + 2, aliases[j].flag)) f = (int)aliases[j].field;
  if (f < 0) f = find_field(a + 2);
  if (f < 0) return 0;
  if (*k + 1 >= argc) {
    fprintf(stderr, "ukern: %s needs a value\n", a);
    return -1;
  }
  if (set_field(s, f, argv[*k + 1], "command line", 0) != CLI_OK) return -1;
  *k += 1;
  return 1;
}

/* Reads a whole text file. Only a regular file is read (opened without
 * blocking, so a FIFO cannot hang the tool), and a NUL byte is an error
 * naming its line: it would silently cut the field short. */
static char *read_file(const char *path, const char *what) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    fprintf(stderr, "ukern: cannot open %s '%s': %s\n", what, path, strerror(errno));
    if (fd >= 0) close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    fprintf(stderr, "ukern: cannot open %s '%s': not a regular file\n", what, path);
    close(fd);
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        close(fd);
        fprintf(stderr, "ukern: out of memory reading '%s'\n", path);
        return NULL;
      }
      buf = nb;
    }
    ssize_t got = read(fd, buf + len, 4096);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      fprintf(stderr, "ukern: error reading '%s': %s\n", path, strerror(errno));
      free(buf);
      close(fd);
      return NULL;
    }
    if (got == 0) break;
    len += (size_t)got;
  }
  close(fd);
  buf[len] = 0;
  const char *nul = memchr(buf, 0, len);
  if (nul) {
    size_t line = 1;
    for (const char *p = buf; p < nul; p++) line += *p == '\n';
    fprintf(stderr, "%s:%zu: a NUL byte (\\0) in the %s: it must be text\n", path, line, what);
    free(buf);
    return NULL;
  }
  return buf;
}

static size_t indent_of(const char *line) {
  size_t n = 0;
  while (line[n] == ' ' || line[n] == '\t') n++;
  return n;
}

static char *trim(char *p) {
  while (*p == ' ' || *p == '\t') p++;
  size_t n = strlen(p);
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r')) p[--n] = 0;
  return p;
}

int cli_spec_load(cli_spec *s, const char *path) {
  snprintf(s->origin, sizeof s->origin, "%s", path);
  char *text = read_file(path, "spec");
  if (!text) return CLI_USAGE;
  free(s->dir);
  s->dir = strdup(path);
  if (s->dir) {
    char *slash = strrchr(s->dir, '/');
    if (slash) slash[slash == s->dir] = 0;
    else strcpy(s->dir, ".");
  }
  int rc = CLI_OK;
  size_t plen = strlen(path);
  if (plen > 3 && !strcmp(path + plen - 3, ".cu")) {
    /* A CUDA file is a module spec with that source, named after the file. */
    char name[256];
    const char *base = strrchr(path, '/');
    snprintf(name, sizeof name, "%.*s", (int)(strlen(base ? base + 1 : path) - 3), base ? base + 1 : path);
    if ((rc = set_field(s, F_kind, "module", path, 1)) == CLI_OK && (rc = set_field(s, F_name, name, path, 1)) == CLI_OK)
      rc = set_field(s, F_source, text, path, 1);
    free(text);
    return rc;
  }
  /* Split into lines in place; lines[] points into text. */
  size_t nlines = 1;
  for (char *p = text; *p; p++) nlines += *p == '\n';
  char **lines = calloc(nlines, sizeof *lines);
  if (!lines || !s->dir) {
    fprintf(stderr, "ukern: out of memory\n");
    rc = CLI_FAIL;
    goto out;
  }
  size_t n = 0;
  for (char *p = text; p; n++) {
    lines[n] = p;
    p = strchr(p, '\n');
    if (p) *p++ = 0;
  }
  for (size_t i = 0; i < n && rc == CLI_OK; i++) {
    char where[600];
    snprintf(where, sizeof where, "%s:%zu", path, i + 1);
    char *line = lines[i];
    char *t = trim(line);
    if (!*t || *t == '#') continue;
    if (indent_of(line) > 0) {
      fprintf(stderr, "%s: indented line outside a `field: |` block\n", where);
      rc = CLI_USAGE;
      break;
    }
    char *colon = strchr(t, ':');
    if (!colon) {
      fprintf(stderr, "%s: expected `field: value`, got '%s'\n", where, t);
      rc = CLI_USAGE;
      break;
    }
    *colon = 0;
    char *key = trim(t), *value = trim(colon + 1);
    int f = find_field(key);
    if (f < 0) {
      unknown_field(where, key);
      rc = CLI_USAGE;
      break;
    }
    if (strcmp(value, "|") != 0) {
      rc = set_field(s, f, value, where, 1);
      if (!s->from_cmd[f]) s->line[f] = (int)i + 1;
      continue;
    }
    /* Block: following lines indented deeper than the key (0), blank lines kept. */
    size_t first = i + 1, last = i, common = (size_t)-1;
    for (size_t j = i + 1; j < n; j++) {
      size_t ind = indent_of(lines[j]);
      int blank = lines[j][ind] == 0 || (lines[j][ind] == '\r' && lines[j][ind + 1] == 0);
      if (blank) continue;
      if (ind == 0) break;
      last = j;
      if (ind < common) common = ind;
    }
    size_t total = 1;
    for (size_t j = first; j <= last; j++) total += strlen(lines[j]) + 1;
    char *v = malloc(total);
    if (!v) {
      fprintf(stderr, "ukern: out of memory\n");
      rc = CLI_FAIL;
      break;
    }
    size_t len = 0;
    for (size_t j = first; j <= last; j++) {
      size_t ll = strlen(lines[j]);
      if (ll && lines[j][ll - 1] == '\r') ll--;
      size_t skip = ll < common ? ll : common;
      memcpy(v + len, lines[j] + skip, ll - skip);
      len += ll - skip;
      v[len++] = '\n';
    }
    v[len] = 0;
    if (last < first) {
      fprintf(stderr, "%s: field '%s' opens a block (`|`) but no indented lines follow\n", where, key);
      rc = CLI_USAGE;
    } else {
      rc = set_field(s, f, v, where, 1);
      if (!s->from_cmd[f]) s->line[f] = (int)first + 1;
    }
    free(v);
    i = last;
  }
out:
  free(lines);
  free(text);
  return rc;
}

static int is_true(const char *v) { return !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes"); }

/* "elementwise and reduction", "elementwise, reduction and fusion": the
 * kinds whose bits are set. */
static void kinds_text(int bits, char *buf, size_t size) {
  int n = 0, total = 0;
  for (int k = 0; k < CLI_KINDS_; k++) total += (bits >> k) & 1;
  buf[0] = 0;
  for (int k = 0; k < CLI_KINDS_; k++) {
    if (!((bits >> k) & 1)) continue;
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "%s%s", n == 0 ? "" : n == total - 1 ? " and " : ", ", kind_names[k]);
    n++;
  }
}

/* What to write instead, for a field a fusion spec does not take. */
static const char *fusion_field_hint(int f) {
  if (f == F_operation || f == F_map_expr || f == F_reduce_expr || f == F_post_map_expr || f == F_identity)
    return "  hint: a fusion's computation is its `program` (NumPy statements, e.g. `z = a * x + y`)\n";
  if (f == F_axes || f == F_keepdims)
    return "  hint: a fusion's reductions name their axes in the program: `s = sum(x, axis=1, keepdims=True)`\n";
  return "";
}

int cli_spec_finish(cli_spec *s) {
  const char *origin = s->origin[0] ? s->origin : "command line";
  s->kind = CLI_ELEMENTWISE;
  if (s->f[F_kind]) {
    int found = 0;
    for (int k = 0; k < CLI_KINDS_; k++)
      if (!strcmp(s->f[F_kind], kind_names[k])) s->kind = (cli_kind)k, found = 1;
    if (!found) {
      fprintf(stderr, "%s: kind '%s' is not elementwise, reduction, fusion or module\n", origin, s->f[F_kind]);
      return CLI_USAGE;
    }
  }
  const char *article = s->kind == CLI_ELEMENTWISE ? "an" : "a";
  for (int f = 0; f < F_COUNT_; f++)
    if (s->f[f] && !(field_kinds[f] & (1 << s->kind))) {
      char owner[128];
      kinds_text(field_kinds[f], owner, sizeof owner);
      fprintf(stderr, "%s: field '%s' does not apply to %s %s kernel (it is for %s kernels)\n", origin,
              field_names[f], article, kind_names[s->kind], owner);
      if (s->kind == CLI_MODULE && (f == F_inputs || f == F_outputs))
        fprintf(stderr, "%s", cli_module_run_hint);
      if (s->kind == CLI_FUSION) fputs(fusion_field_hint(f), stderr);
      return CLI_USAGE;
    }
  static const cli_field need_ew[] = {F_in_params, F_out_params, F_operation};
  static const cli_field need_red[] = {F_in_params, F_out_params, F_map_expr, F_reduce_expr, F_post_map_expr};
  static const cli_field need_fus[] = {F_in_params, F_out_params, F_program};
  const cli_field *need = s->kind == CLI_ELEMENTWISE ? need_ew : s->kind == CLI_FUSION ? need_fus : need_red;
  int nneed = s->kind == CLI_ELEMENTWISE || s->kind == CLI_FUSION ? 3 : s->kind == CLI_REDUCTION ? 5 : 0;
  for (int j = 0; j < nneed; j++)
    if (!s->f[need[j]]) {
      fprintf(stderr, "%s: %s %s kernel needs the field '%s'\n", origin, article, kind_names[s->kind],
              field_names[need[j]]);
      if (s->kind == CLI_FUSION)
        fputs("  hint: e.g. `in_params: x, y`, `out_params: z`, `program: z = a * x + y` (names only: the\n"
              "  dtypes come from `inputs`)\n", stderr);
      return CLI_USAGE;
    }
  if (s->kind == CLI_MODULE) {
    if (!!s->f[F_source] == !!s->f[F_file]) {
      fprintf(stderr, "%s: a module needs exactly one of the fields 'source' and 'file'\n", origin);
      return CLI_USAGE;
    }
    if (s->f[F_file]) {
      char path[4096];
      const char *fp = s->f[F_file];
      if (fp[0] != '/' && s->dir) snprintf(path, sizeof path, "%s/%s", s->dir, fp);
      else snprintf(path, sizeof path, "%s", fp);
      if (!(s->f[F_source] = read_file(path, "CUDA source"))) return CLI_USAGE;
    }
  }
  if (s->f[F_no_reduce_dims] && !is_true(s->f[F_no_reduce_dims]) && strcmp(s->f[F_no_reduce_dims], "false") &&
      strcmp(s->f[F_no_reduce_dims], "0")) {
    fprintf(stderr, "%s: no_reduce_dims is '%s', expected true or false\n", origin, s->f[F_no_reduce_dims]);
    return CLI_USAGE;
  }
  if (s->f[F_block_reduce] && strcmp(s->f[F_block_reduce], "ukern") && strcmp(s->f[F_block_reduce], "cub")) {
    fprintf(stderr, "%s: block_reduce is '%s', expected ukern or cub\n", origin, s->f[F_block_reduce]);
    return CLI_USAGE;
  }
  return CLI_OK;
}

void cli_spec_where(const cli_spec *s, cli_field f) {
  if (s->line[f] > 0)
    fprintf(stderr, "  (line 1 of '%s' is %s:%d)\n", field_names[f], s->origin, s->line[f]);
}

void cli_spec_free(cli_spec *s) {
  for (int f = 0; f < F_COUNT_; f++) free(s->f[f]);
  free(s->dir);
  memset(s, 0, sizeof *s);
}

int cli_spec_cases(const cli_spec *s) {
  const char *p = s->f[F_inputs];
  if (!p) return 0;
  int n = 0;
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    for (size_t j = 0; j < len; j++)
      if (!isspace((unsigned char)p[j])) {
        n++;
        break;
      }
    p += len + (e != NULL);
  }
  return n;
}

const char *cli_spec_case(const cli_spec *s, int i, char *buf, size_t size) {
  const char *p = s->f[F_inputs];
  int n = 0;
  while (p && *p) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    int blank = 1;
    for (size_t j = 0; j < len; j++) blank &= isspace((unsigned char)p[j]) != 0;
    if (!blank && n++ == i) {
      if (len >= size) len = size - 1;
      memcpy(buf, p, len);
      buf[len] = 0;
      return buf;
    }
    p += len + (e != NULL);
  }
  return NULL;
}

int cli_spec_args(int argc, char **argv, cli_spec *s, cli_own_arg own, void *user) {
  for (int k = 1; k < argc; k++) {
    int r = cli_spec_flag(s, argc, argv, &k);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    r = own(user, argc, argv, &k);
    if (r < 0) return CLI_USAGE;
    if (r == 0) {
      fprintf(stderr, "ukern %s: unexpected argument '%s' (see `ukern %s --help`)\n", argv[0], argv[k], argv[0]);
      return CLI_USAGE;
    }
  }
  return CLI_OK;
}
