/* The reduction cost model (red_cost.h).
 *
 * A call costs a fixed part, then the longer of two things: streaming its
 * bytes at the rate its loads in flight can sustain (Little's law), and
 * the longest chain of dependent steps one thread runs (rounds of loads,
 * each a memory latency, and the combines between outputs); then, for a
 * split launch, the last block's combine of the partials; for partials
 * wider than one word, a cost per block (WIDE_BLOCK_US).
 *
 * Constants: the H200 sweep of 2026-11-27 (bench/results/sweep-2026-11-27-
 * h200.json, float32, L2 flushed, event-timed from Python; docs/PERF.md
 * "Sweep"), each from the points named beside it, read with the plans the
 * planner of that day chose for them. Those marked "model" had no point
 * that isolates them. Residency (blocks per SM) is the loaded kernel's
 * (occupancy.h, uk_red_facts.per_sm): 8 for the float32 sum programs
 * (30-32 registers), 4 for an argmax pair's column kernel (56). */
#include "codegen/red_cost.h"


/* Copy rate: meta.copy_rate_Bps, 4.17e12 B/s. */
#define BW_B_PER_US 4.17e6
/* What streaming costs past the bytes at the copy rate, up to a limit:
 * the 24 points of 64 MiB whose plans the model keeps took 0.73-0.79 of
 * the model without it (28-32 us against 22.4: +6.5 us); at 4 MiB, 9.1-
 * 9.4 us against 7.3-7.6 (the whole 1.0 us of their bytes); at 1 GiB
 * nothing measurable. Since inputs of at most 128 MiB load past L1
 * (UK_RED_STREAM_MAX_BYTES) about 2.5-3 us of it is gone at 64 MiB; the
 * term stays as fitted: the same for every candidate of a point, it
 * moves no choice (the model's times are that much high there). */
#define RAMP_US 6.5
/* Fixed cost of a call: 64 KiB (256, 64) axis 1 (8 threads per output,
 * 8 blocks, one round of loads) took 7.3 us: 7.3 - LAT - COMB_G8. */
#define T0_US 6.3
/* One dependent round of a thread's loads: 64 KiB (256, 64) axis 0 (one
 * block, 8 rounds of 4 vectors per thread) 14.5 us and (64, 256) axis 0
 * (16 rounds) 14.9 us against 7.3 us for one round: 1.0 and 0.5 us a
 * round; the non-adjacent 1 GiB points (scalar loads, 2 in flight, 410-482
 * rounds per thread in 2 waves: 0.691, 0.816 and 0.468 ms) give 0.84-0.92. */
#define LAT_US 0.9
/* The latency Little's law sees under full load: the bytes in flight that
 * saturate the memory are BW x INFLIGHT_US, more than BW x LAT_US (queues
 * lengthen it). The second sweep (2026-11-27b, 64 MiB, float32): a block
 * per output over 256 outputs (256 blocks, 4 vectors in flight per thread:
 * 4.2 MB) took 32.9 and 34.8 us, against 27.7-27.9 us for 512 blocks (8.4
 * MB) of the same shapes: 4.2 MB filled 0.7 of the bandwidth, so 5.8 MB
 * fill it (1.4 us). With fewer bytes in flight the queues are shorter:
 * the model moves from LAT_US to this in proportion to the load. */
#define INFLIGHT_US 1.4
/* One dependent L2 load in a split combine: the column combine of that day
 * walked nsplit partials one load at a time, and took (0.3709 - 0.2573) /
 * 528 (1 GiB 1048576x256 axis 0), (0.0802 - 0.0244) / 256 (64 MiB
 * 65536x256 axis 0), (0.1287 - 0.0245) / 512 ms (64 MiB 512x256x128 axes
 * 0,1): 0.215, 0.218, 0.204 us. */
#define L2DEP_US 0.21
/* Each piece of a split group launch at its column's counter: the last
 * block's combine starts later the more blocks count there, as they all
 * finish together (one column measured: a full sum). Bare one-kernel sums
 * of 64 MiB (H200, session 15, L2 flushed by a read; docs/PERF.md "Session
 * 15"): 18.7 us without the counting and combine at 512, 1024 and 2048
 * blocks; with them 20.2, 21.0 and 22.4 us (every thread fencing) and
 * 19.9, 20.7 and 22.0 us (thread 0's acquire-release count): 1.4-1.6 ns a
 * block, on about 0.8 us. */
#define ARRIVE_US 0.0015
/* A block-wide combine and post between two outputs: 1 GiB 262144x1024
 * axis 2, a block per output, 248 outputs in sequence per block slot, one
 * round each: 0.3285 ms - T0 = 322 us = 248 x (LAT + 0.40). */
#define COMB_B_US 0.40
/* Warp combines (3 and 5 shuffle rounds, no barrier): model, scaled from
 * COMB_B's 8 shuffle rounds and 2 barriers; every sweep point that used 8
 * threads per output streams at the copy rate, so none isolates them. */
#define COMB_G8_US 0.10
#define COMB_G32_US 0.16
/* One halving step in shared memory (a barrier and a load): model. */
#define SYNC_US 0.02
/* The latency the loads in flight of a column kernel must cover to stream
 * at the copy rate: more than LAT_US under full load. The second sweep
 * (bench/results/sweep-2026-11-27b-h200.json, 64 MiB, 32768 outputs of
 * 512 and 16384 of 1024): 256 blocks of 8 (16) threads per output with 4
 * vectors in flight per thread took 34.2-35.5 us where 512-1024 blocks of
 * the same kernel took 28.5-30.0 (ncu: 24.0 us, 23.6% occupancy, DRAM
 * 60%); 1.4 us puts both within 5%. */
#define COLS_LAT_US 1.4
/* Each of a column thread's rounds after its first, in latencies: a
 * round's loads do not wait for the last round's combines, so they issue
 * while those are in flight. Fused argmax over axis 0 of 1024 x 16 (H200,
 * session 24: 16-128 rows a thread, 4-32 rounds, unsplit, on 4-1 blocks)
 * took 0.38, 0.50 and 0.36 us for each doubling's added round, against
 * LAT_US for a call's first (docs/PERF.md "Session 24"); the 8-row plans
 * this moves from split to unsplit ran 0.03-0.8 us faster. */
#define COLS_NEXT_ROUND 0.5
/* The bytes of a block's first round of group loads that arrive in the
 * latency alone; past them the round waits at its SM's share of the copy
 * rate. The third sweep (bench/results/sweep-2026-11-27c-h200.json, fused
 * row sums of two float32 inputs, 64 and 256 KiB): rounds of 8 KiB a block
 * (16-64 blocks) took 4.2-4.5 us, of 16 KiB 4.5-4.7 us, of 32 KiB (4-16
 * blocks: 8 threads per output over rows of 128, a warp over rows of 512)
 * 5.8-6.2 us; 32 KiB at 1/132 of the copy rate is 1.0 us. */
#define ROUND_FREE_B 8192.0
/* Each block of a column kernel, per SM, per 32-bit word of its partial
 * past the first: a block's halving in shared memory, its partial's store
 * and the last block's loads move the whole reduce type (an argmax pair:
 * 4 words), so wide partials make every block dearer, which neither the
 * streaming nor the chain sees. Fused argmax over axis 0 (H200, session
 * 18, L2 flushed; docs/PERF.md "Session 18"), 9 shapes of 4 MiB-64 MiB
 * timed at every tile width 8/16/32 and 1-32 pieces: at 1024 x 4096 the
 * kernel took 12.3, 13.6 and 16.5 us with 256, 512 and 1024 blocks, the
 * float32 sum 10.1-10.3 at all three; float64 sums in between. 0.3-0.5
 * puts the plan of every argmax shape within 0.1-1.1 us of its best timed
 * one (0.4 the fewest us lost in all, with vector partials or without);
 * one word (float32 sums) adds nothing, so their plans do not move. */
#define WIDE_BLOCK_US 0.4
/* ... in full from 4 MiB; below, in proportion to the bytes: there the
 * blocks' pair work hides behind the latency (1024 x 256 over axis 0, 1
 * MiB: 7.3 us with 256 blocks, 7.7 with the 64 the whole term chose). */
#define WIDE_FULL_BYTES (4.0 * 1048576.0)
/* Elements per round of a thread reading one element at a time: the
 * scalar loops keep about 2 loads in flight (the non-adjacent 1 GiB points
 * above: 0.468 ms for 2 waves of 512 elements per thread is 0.46 us per
 * 2 elements). */
#define SCALAR_TRIP 2.0

/* No libm on the planner's path (x86-64's baseline has no rounding
 * instruction: ceil and log2 are calls). Values here are whole and
 * below 2^62. */
static double floord(double a) { return a >= 4.0e18 ? a : (double)(int64_t)a; } /* past 2^52: whole already */
static double cdivd(double a, double b) {
  if (b <= 0) return 0;
  double q = a / b, t = floord(q);
  return t < q ? t + 1 : t;
}
static double mind(double a, double b) { return a < b ? a : b; }
static double maxd(double a, double b) { return a > b ? a : b; }
/* log2 of a power of two (by, Q) */
static double log2i(double x) { return x > 1 ? (double)__builtin_ctzll((unsigned long long)x) : 0; }

/* Streaming time: the bytes at the rate `inflight` bytes in flight sustain
 * (BW x `lat` saturate the memory), and at least one block per SM. */
static double stream_us(double bytes, double conc_blocks, double inflight, double lat, int sms) {
  double fill = mind(1.0, mind(inflight / (BW_B_PER_US * lat), conc_blocks / (sms > 0 ? sms : 1)));
  return fill > 0 ? bytes / (BW_B_PER_US * fill) : 0;
}

double uk__red_cost_us(const uk_red_strategy *s, const uk_red_facts *f, int sms) {
  if (f->nout <= 0 || s->grid_x <= 0) return 0;
  const double B = uk__red_block_threads(s),
               resident = (double)(sms > 0 ? sms : 1) * (f->per_sm > 0 ? f->per_sm : 2048 / UK_RED_BLOCK);
  const double nout = (double)f->nout, nred = (double)f->nred, chunk = (double)(s->chunk > 0 ? s->chunk : 1);
  const double bytes = nout * nred * (double)f->elem_bytes;
  const double blocks = (double)s->grid_x * (double)(s->nsplit > 0 ? s->nsplit : 1), conc = mind(blocks, resident);
  const double waves = cdivd(blocks, resident), v = s->vec ? f->vec : 1;
  /* INFLIGHT_US was measured on the group kernels; the column and packed
   * kernels' plans were fitted with LAT_US (their own recalibration is
   * separate work) */
  double chain = 0, split = 0, inflight = 0, lat = LAT_US, wide = 0;
  if (s->kernel == UK_RED_COLS) {
    const double by = s->by > 0 ? s->by : 1, bx = B / by, slots = (double)s->slots, nv = slots / bx;
    /* rows per round: red_cols issues 4 rows' loads a trip, 8 for scalar
     * loads of rows of at most 8 bytes (ukern/red_cols.cuh cols_loop) */
    const double trip = !s->vec && f->elem_bytes <= 8 ? 8 : 4;
    const double rows = cdivd(mind(chunk, nred), by), rounds = maxd(1, cdivd(rows, trip));
    const double active = cdivd(mind(nout, slots), nv) * mind(by, chunk); /* threads of a block with work */
    const double round_bytes = active * mind(trip, rows) * nv * (double)f->elem_bytes; /* one block's round */
    /* Little's law at a latency that grows with the load, from LAT_US
     * idle to COLS_LAT_US where the loads in flight would saturate the
     * memory at LAT_US (expressed through stream_us's LAT_US). */
    const double raw = conc * round_bytes, load = mind(1, raw / (BW_B_PER_US * LAT_US));
    inflight = raw * LAT_US / (LAT_US + (COLS_LAT_US - LAT_US) * load);
    /* A block's first round also waits for its bytes at its SM's share of
     * the copy rate: few blocks of many bytes (a small problem on 4 SMs)
     * cost more than the same bytes spread over more SMs. The halving
     * counts a step per output as when each output had its own (the second
     * sweep's kernel): red_cols now halves all nv together, log2(by)
     * barriers in all, a saving not measured yet. */
    chain = waves * ((1 + (rounds - 1) * COLS_NEXT_ROUND) * LAT_US + (by > 1 ? nv * log2i(by) * SYNC_US : 0)) +
            round_bytes / (BW_B_PER_US / (sms > 0 ? sms : 1));
    if (f->partial_bytes > 4)
      wide = (f->partial_bytes / 4.0 - 1) * cdivd(blocks, sms > 0 ? sms : 1) * WIDE_BLOCK_US *
             mind(1, bytes / WIDE_FULL_BYTES);
    if (s->nsplit > 1) {
      const double S = mind(slots, B), Q = B / S, per = cdivd((double)s->nsplit, Q);
      const double loads = floord(per / 4) + (per - 4 * floord(per / 4)); /* four in flight, then the rest */
      split = 2 * L2DEP_US + cdivd(slots, S) * loads * L2DEP_US + log2i(Q) * SYNC_US;
    }
  } else if (s->kernel == UK_RED_PACK) {
    const double items = nout / (f->vec >= 2 ? f->vec / 2 : 1), per_round = B * uk__red_pack_unroll(f->vec);
    chain = cdivd(items, (double)s->grid_x * per_round) * LAT_US;
    inflight = conc * per_round * f->vec * (double)f->elem_bytes;
  } else {
    const double g = uk__red_threads_per_output(s), per_block = B / g;
    const double comb = g == 1 ? 0 : g == 8 ? COMB_G8_US : g == 32 ? COMB_G32_US : COMB_B_US;
    const double trip = s->vec ? 4 * v : SCALAR_TRIP; /* elements per thread per round */
    const double piece = mind(chunk, nred), per_thread = cdivd(piece, g);
    const double rounds = maxd(1, cdivd(per_thread, trip));
    /* outputs one block runs in sequence (a grid-stride loop unless split) */
    const double seq = s->nsplit > 1 ? 1 : cdivd(cdivd(nout, per_block), (double)s->grid_x);
    const double active = mind(per_block, nout) * mind(g, cdivd(piece, v));
    inflight = conc * active * mind(trip, per_thread) * (double)f->elem_bytes;
    /* queues lengthen the latency as the loads in flight approach what
     * saturates the memory (a few blocks of a small call see LAT_US) */
    lat = LAT_US + (INFLIGHT_US - LAT_US) * mind(1.0, inflight / (BW_B_PER_US * INFLIGHT_US));
    /* A deep program's block (several inputs a trip) also waits in its
     * first round for its bytes past ROUND_FREE_B at its SM's share of the
     * copy rate (as the column kernels' whole round). Not one input's: the
     * term moved full sums and argmax of 1 MiB from 64 splits of 4096 to
     * 512 of 512, whose combine took them 6.7 -> 8.1 us and 9.1 -> 14.4 us
     * (H200, session 10). */
    const double round_bytes = f->deep ? active * mind(trip, per_thread) * (double)f->elem_bytes : 0;
    chain = waves * seq * (rounds * LAT_US + comb) +
            maxd(0, round_bytes - ROUND_FREE_B) / (BW_B_PER_US / (sms > 0 ? sms : 1));
    /* the last block's combine: each thread's partials, four loads in flight a trip */
    if (s->nsplit > 1)
      split = 2 * L2DEP_US + cdivd(cdivd((double)s->nsplit, g), 4) * L2DEP_US + comb + ARRIVE_US * (double)s->nsplit;
  }
  return T0_US + mind(bytes / BW_B_PER_US, RAMP_US) + maxd(stream_us(bytes, conc, inflight, lat, sms), chain) + split + wide;
}
