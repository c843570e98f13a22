// SPDX-License-Identifier: GPL-2.0
/*
 * CXL_CCM_KERNEL_PAGERANK (the graph workload of the AXLE evaluation) in
 * every mode: the device sums each vertex's in-neighbours' contributions,
 * the host updates the ranks (fixed point, damping 0.85) and writes the next
 * iteration's contributions into the other of two input regions while the
 * device works on this one. Three iterations on a skewed random graph; every
 * vertex's sum in every iteration is checked against the CPU, and so are the
 * final ranks. Bad arguments give one FINAL | ERROR record.
 */
#include "kernel_lib.h"

#define V	2000
#define E	8000
#define ITERS	3
#define CHUNK	32	/* vertices per record: 32 * 8 B = the SF of 256 */
#define REGION	(64 << 10)
#define INPUT	(((V + 1 + E) * 4) + V * 8)

KTENANT_FIXTURE(pagerank, CXL_CCM_KERNEL_PAGERANK, 2 * REGION)

struct graph {
	__u32 off[V + 1], src[E], outdeg[V];
};

/* Edges with skewed sources (squares of a uniform draw), sorted by destination. */
static void make_graph(struct graph *g)
{
	static __u32 dst[E], src[E];
	__u32 x = 7, i, v, n = 0;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < E; i++) {
		x = x * 1664525 + 1013904223;
		dst[i] = (x >> 8) % V;
		x = x * 1664525 + 1013904223;
		src[i] = (__u32)(((__u64)((x >> 8) % V) * ((x >> 16) % V)) / V);
		g->outdeg[src[i]]++;
	}
	for (v = 0; v < V; v++) {
		g->off[v] = n;
		for (i = 0; i < E; i++)
			if (dst[i] == v)
				g->src[n++] = src[i];
	}
	g->off[V] = n;
}

/* Fixed point: ranks and contributions scaled by 2^32. */
static __u64 contribution(__u64 rank, __u32 outdeg)
{
	return outdeg ? rank / outdeg : 0;
}

static __u64 update(__u64 sum)
{
	return ((1ULL << 32) / V) * 15 / 100 + (sum >> 16) * 55705;	/* 0.15/V + 0.85 sum */
}

static void write_region(__u8 *r, const struct graph *g, const __u64 *rank)
{
	__u32 v;

	memcpy(r, g->off, sizeof(g->off));
	memcpy(r + sizeof(g->off), g->src, sizeof(g->src));
	for (v = 0; v < V; v++) {
		__u64 c = contribution(rank[v], g->outdeg[v]);

		memcpy(r + (V + 1 + E) * 4 + v * 8, &c, 8);
	}
}

static int launch_pr(int fd, __u64 input_offset, __u32 vertices, __u32 edges, __u32 chunk,
		     __u64 size)
{
	struct cxl_ccm_pagerank_args a = {
		.vertices = vertices, .edges = edges, .chunk_vertices = chunk,
	};
	struct cxl_ccm_launch l = {
		.kernel_id = CXL_CCM_KERNEL_PAGERANK, .input_offset = input_offset,
		.input_size = size, .arg_size = sizeof(a),
	};

	memcpy(l.args, &a, sizeof(a));
	return ioctl(fd, CXL_CCM_IOC_LAUNCH, &l);
}

TEST_F_TIMEOUT(pagerank, iterations, 90)
{
	static struct graph g;
	static __u64 rank[V], ref[V], sum[V], want[V];
	__u8 *in = self->t.ring.in;
	__u32 it, v, e, status = 1;

	make_graph(&g);
	for (v = 0; v < V; v++)
		rank[v] = ref[v] = (1ULL << 32) / V;
	write_region(in, &g, rank);
	for (it = 0; it < ITERS; it++) {
		memset(sum, 0xff, sizeof(sum));
		ASSERT_EQ(0, launch_pr(self->t.fd, (it % 2) * REGION, V, E, CHUNK, INPUT))
			TH_LOG("%s", strerror(errno));
		ASSERT_EQ((V + CHUNK - 1) / CHUNK,
			  ktenant_collect(_metadata, &self->t, sum, sizeof(sum), &status));
		EXPECT_EQ(0U, status);
		/* Every sum from this iteration's ranks, then the update. */
		for (v = 0; v < V; v++) {
			want[v] = 0;
			for (e = g.off[v]; e < g.off[v + 1]; e++)
				want[v] += contribution(ref[g.src[e]], g.outdeg[g.src[e]]);
			ASSERT_EQ(want[v], sum[v]) TH_LOG("iteration %u vertex %u", it, v);
		}
		for (v = 0; v < V; v++) {
			rank[v] = update(sum[v]);
			ref[v] = update(want[v]);
		}
		/* The next iteration's contributions go to the other region. */
		write_region(in + ((it + 1) % 2) * REGION, &g, rank);
	}
	for (v = 0; v < V; v++)
		ASSERT_EQ(ref[v], rank[v]);
}

TEST_F_TIMEOUT(pagerank, bad_arguments, 30)
{
	__u32 status = 0;

	ASSERT_EQ(0, launch_pr(self->t.fd, 0, V, E, CHUNK, INPUT - 8));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	ASSERT_EQ(0, launch_pr(self->t.fd, 0, V, E, 33, INPUT));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
}

TEST_HARNESS_MAIN
