// SPDX-License-Identifier: GPL-2.0
/*
 * CXL_CCM_KERNEL_SSSP (the shortest-path workload of the AXLE evaluation) in
 * every mode: the device relaxes every vertex's in-edges against the current
 * distances, the host takes the minimum with the distances it has and writes
 * the next iteration's input into the other of two regions, until nothing
 * changes. Every vertex's relaxed value in every iteration is checked against
 * the CPU, the final distances against a CPU Bellman-Ford, and so is the
 * number of iterations. Unreached vertices stay at the maximum (saturation).
 * Bad arguments give one FINAL | ERROR record.
 */
#include "kernel_lib.h"

#define V	2000
#define E	8000
#define CHUNK	32
#define REGION	(96 << 10)
#define INPUT	(((V + 1 + 2 * E) * 4) + V * 8)
#define UNREACHED	(~0ULL)

KTENANT_FIXTURE(sssp, CXL_CCM_KERNEL_SSSP, 2 * REGION)

struct wgraph {
	__u32 off[V + 1], src[E], w[E];
};

/* Random edges, weights 1-100, sorted by destination; vertices >= V - 50 get no in-edge. */
static void make_graph(struct wgraph *g)
{
	static __u32 dst[E], src[E], w[E];
	__u32 x = 11, i, v, n = 0;

	for (i = 0; i < E; i++) {
		x = x * 1664525 + 1013904223;
		dst[i] = (x >> 8) % (V - 50);
		x = x * 1664525 + 1013904223;
		src[i] = (x >> 8) % V;
		w[i] = 1 + (x >> 20) % 100;
	}
	for (v = 0; v < V; v++) {
		g->off[v] = n;
		for (i = 0; i < E; i++)
			if (dst[i] == v) {
				g->src[n] = src[i];
				g->w[n++] = w[i];
			}
	}
	g->off[V] = n;
}

static __u64 relax(const struct wgraph *g, const __u64 *dist, __u32 v)
{
	__u64 best = UNREACHED;
	__u32 e;

	for (e = g->off[v]; e < g->off[v + 1]; e++) {
		__u64 d = dist[g->src[e]], c = d == UNREACHED ? UNREACHED : d + g->w[e];

		if (c < best)
			best = c;
	}
	return best;
}

static void write_region(__u8 *r, const struct wgraph *g, const __u64 *dist)
{
	memcpy(r, g->off, sizeof(g->off));
	memcpy(r + sizeof(g->off), g->src, sizeof(g->src));
	memcpy(r + sizeof(g->off) + sizeof(g->src), g->w, sizeof(g->w));
	memcpy(r + (V + 1 + 2 * E) * 4, dist, V * 8);
}

static int launch_sssp(int fd, __u64 input_offset, __u32 chunk, __u64 size)
{
	struct cxl_ccm_sssp_args a = { .vertices = V, .edges = E, .chunk_vertices = chunk };
	struct cxl_ccm_launch l = {
		.kernel_id = CXL_CCM_KERNEL_SSSP, .input_offset = input_offset,
		.input_size = size, .arg_size = sizeof(a),
	};

	memcpy(l.args, &a, sizeof(a));
	return ioctl(fd, CXL_CCM_IOC_LAUNCH, &l);
}

TEST_F_TIMEOUT(sssp, to_the_fixed_point, 120)
{
	static struct wgraph g;
	static __u64 dist[V], ref[V], relaxed[V], next[V];
	__u32 it, v, status = 1, iters = 0, ref_iters = 0;
	bool changed = true;

	make_graph(&g);
	for (v = 0; v < V; v++)
		dist[v] = ref[v] = UNREACHED;
	dist[0] = ref[0] = 0;
	/* The CPU's Bellman-Ford, in the same synchronous rounds. */
	while (changed) {
		changed = false;
		for (v = 0; v < V; v++) {
			__u64 c = relax(&g, ref, v);

			next[v] = c < ref[v] ? c : ref[v];
			changed |= next[v] != ref[v];
		}
		memcpy(ref, next, sizeof(ref));
		ref_iters++;
	}
	write_region(self->t.ring.in, &g, dist);
	for (it = 0, changed = true; changed && it < V; it++) {
		changed = false;
		ASSERT_EQ(0, launch_sssp(self->t.fd, (it % 2) * REGION, CHUNK, INPUT))
			TH_LOG("%s", strerror(errno));
		ASSERT_EQ((V + CHUNK - 1) / CHUNK,
			  ktenant_collect(_metadata, &self->t, relaxed, sizeof(relaxed), &status));
		EXPECT_EQ(0U, status);
		for (v = 0; v < V; v++) {
			ASSERT_EQ(relax(&g, dist, v), relaxed[v]) TH_LOG("iteration %u vertex %u", it, v);
			next[v] = relaxed[v] < dist[v] ? relaxed[v] : dist[v];
			changed |= next[v] != dist[v];
		}
		memcpy(dist, next, sizeof(dist));
		write_region((__u8 *)self->t.ring.in + ((it + 1) % 2) * REGION, &g, dist);
		iters++;
	}
	EXPECT_EQ(ref_iters, iters);
	EXPECT_LT(2U, iters) TH_LOG("the graph must need a few rounds");
	for (v = 0; v < V; v++)
		ASSERT_EQ(ref[v], dist[v]) TH_LOG("vertex %u", v);
	EXPECT_EQ(UNREACHED, dist[V - 1]) TH_LOG("a vertex without in-edges stays unreached");
}

TEST_F_TIMEOUT(sssp, bad_arguments, 30)
{
	__u32 status = 0;

	/* The size of a PageRank input: the weights are missing. */
	ASSERT_EQ(0, launch_sssp(self->t.fd, 0, CHUNK, INPUT - E * 4));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
}

TEST_HARNESS_MAIN
