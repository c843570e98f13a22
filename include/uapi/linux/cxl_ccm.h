/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cxl_ccm: offload to CXL computational memory (CCM) with asynchronous
 * back-streaming (AXLE).
 *
 * The device back-streams the results of an offloaded kernel by DMA into two
 * rings in host memory: the metadata ring (one struct cxl_ccm_metadata_record
 * per partial result) and the payload ring (fixed-size slots holding the
 * result data). User space maps both read-only, polls the metadata tail in the
 * mapped struct cxl_ccm_ring_headers, consumes records in any order, and
 * returns them with CXL_CCM_IOC_RELEASE, which gives the device its credit.
 *
 * Usage:
 *   fd = open("/dev/cxl_ccm0", O_RDWR);
 *   ioctl(fd, CXL_CCM_IOC_INFO, &info);          optional: limits, kernels
 *   ioctl(fd, CXL_CCM_IOC_CONFIGURE, &cfg);      once: rings, mode, input size
 *   hdr = mmap(.., cfg.headers_size, PROT_READ, MAP_SHARED, fd,
 *              CXL_CCM_MMAP_HEADERS);
 *   md  = mmap(.., cfg.metadata_ring_size, PROT_READ, .., CXL_CCM_MMAP_METADATA);
 *   pl  = mmap(.., cfg.payload_ring_size, PROT_READ, .., CXL_CCM_MMAP_PAYLOAD);
 *   in  = mmap(.., cfg.input_size, PROT_READ | PROT_WRITE, ..,
 *              CXL_CCM_MMAP_INPUT);
 *   write the input into in[]; ioctl(fd, CXL_CCM_IOC_LAUNCH, &launch);
 *   loop:
 *     tail = __atomic_load_n(&hdr->metadata.tail, __ATOMIC_ACQUIRE);
 *     (or ioctl(fd, CXL_CCM_IOC_WAIT, &wait) to block)
 *     for (i = head; i != tail; i++) {          free-running __u32 counters
 *       rec = md[i & (cfg.metadata_slots - 1)];  copy it, check rec.seq == i
 *       payload: rec.length bytes from slot rec.payload_index & (slots - 1),
 *       wrapping at the end of the payload ring; check rec.checksum
 *     }
 *     ioctl(fd, CXL_CCM_IOC_RELEASE, &release);  metadata head + entries
 *
 * All counters (ring heads and tails, launch tags) are free-running __u32
 * values: the slot of counter i is i & (capacity - 1), and two counters are
 * compared only by wrapping subtraction. They start at cfg.index_base.
 *
 * The ring memory bypasses the cache (it is mapped write-combining, in the
 * kernel and in user space): a slot reused on the next lap is never read from
 * a stale cache line. The device writes a record's payload, then the
 * payload tail, then the record, then the metadata tail, with write barriers in
 * between, so a record read below an acquired metadata tail has a complete
 * payload - provided the reader keeps its record and payload loads after the
 * tail load. Loads from write-combining memory are weakly ordered, and an
 * acquire load does not order them on every architecture (on x86 it is a
 * plain MOV): after loading a tail, issue a read barrier that covers
 * write-combining memory (LFENCE on x86, DMB OSHLD on arm64) before reading
 * the slots it covers.
 *
 * Conventions: every structure has fixed-width fields, explicit padding and
 * reserved fields. The driver fails with EINVAL on an unknown flag bit or a
 * nonzero reserved field, and with ENOTTY on a command whose encoded size
 * differs from its structure's. Every command is _IOWR; below 8 KiB its
 * encoding is the same on every architecture.
 *
 * The Rust definitions of the same ABI are drivers/cxl_ccm/abi.rs and
 * drivers/cxl_ccm/uapi.rs; tools/ccm-abi checks that they match this header.
 * All multi-byte fields written by the device are little-endian.
 */
#ifndef _UAPI_LINUX_CXL_CCM_H
#define _UAPI_LINUX_CXL_CCM_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define CXL_CCM_ABI_VERSION		1

/* Limits and defaults. */
#define CXL_CCM_LAUNCH_SLOTS		64	/* launches outstanding per tenant */
#define CXL_CCM_MAX_ARG_SIZE		32	/* bytes of a kernel argument block */
#define CXL_CCM_METADATA_RECORD_SIZE	32	/* metadata ring slot size */
#define CXL_CCM_MIN_SLOT_SIZE		8	/* payload slot size range */
#define CXL_CCM_MAX_SLOT_SIZE		4096
#define CXL_CCM_DEFAULT_SLOT_SIZE	32
#define CXL_CCM_DEFAULT_STREAMING_FACTOR 32	/* bytes */
#define CXL_CCM_MAX_RING_SLOTS		(1U << 31)

/*
 * Offload modes (struct cxl_ccm_configure.mode).
 *
 * AXLE:     non-blocking launch; results back-streamed into the rings; the
 *           caller polls the metadata tail locally.
 * RP:       remote polling: the launch is a mailbox command over CXL.io and
 *           completion is polled over CXL.io; the driver then copies the
 *           results into the rings.
 * BS:       bulk synchronous: every launch returns at completion; the driver
 *           then copies the results into the rings.
 * AXLE_IRQ: AXLE with an interrupt on new results (CXL_CCM_IOC_WAIT sleeps).
 */
#define CXL_CCM_MODE_AXLE		0
#define CXL_CCM_MODE_RP			1
#define CXL_CCM_MODE_BS			2
#define CXL_CCM_MODE_AXLE_IRQ		3

/* Streaming order (struct cxl_ccm_configure.streaming_order). */
#define CXL_CCM_ORDER_OUT_OF_ORDER	0	/* as produced (AXLE's OoO streaming) */
#define CXL_CCM_ORDER_IN_ORDER		1	/* by result_offset, per launch */

/* Device capabilities (struct cxl_ccm_info.caps). */
#define CXL_CCM_CAP_MODE_AXLE		(1ULL << CXL_CCM_MODE_AXLE)
#define CXL_CCM_CAP_MODE_RP		(1ULL << CXL_CCM_MODE_RP)
#define CXL_CCM_CAP_MODE_BS		(1ULL << CXL_CCM_MODE_BS)
#define CXL_CCM_CAP_MODE_AXLE_IRQ	(1ULL << CXL_CCM_MODE_AXLE_IRQ)
#define CXL_CCM_CAP_IN_ORDER		(1ULL << 8)

/*
 * Kernels (struct cxl_ccm_launch.kernel_id; struct cxl_ccm_info.kernels has
 * bit k set if kernel k is implemented).
 *
 * NOP:          streams one final record without payload.
 * STREAM_XFORM: element-wise transform of a vector of little-endian __u32
 *               (struct cxl_ccm_stream_xform_args); every chunk_size bytes of
 *               output are one record whose checksum is the chunk's CRC32C.
 * KNN:          squared Euclidean distances of rows to a query
 *               (struct cxl_ccm_knn_args): input = query then rows, dim
 *               little-endian __s32 each; output = one __u64 per row.
 * SSB_Q1_1/2:   filter of lineorder rows (orderdate yyyymmdd, quantity,
 *               discount, extendedprice: four __u32) by the ranges of
 *               struct cxl_ccm_ssb_args; per chunk_rows rows one record of
 *               two __u64: sum(extendedprice * discount) and the matches.
 * SSSP:         edge relaxation (struct cxl_ccm_sssp_args): input = in-edge
 *               CSR (vertices + 1 __u32 offsets, edges __u32 sources, edges
 *               __u32 weights) then vertices __u64 distances; output = per
 *               vertex the smallest dist[source] + weight (saturating).
 * PAGERANK:     neighbour traversal (struct cxl_ccm_pagerank_args): input =
 *               in-edge CSR (vertices + 1 __u32 offsets, edges __u32
 *               sources) then vertices __u64 contributions; output = per
 *               vertex the wrapping sum of its in-neighbours' contributions.
 * DLRM_SLS:     sparse-length-sum (struct cxl_ccm_sls_args): input = an
 *               embedding table (rows x dim __s32) then samples x pooling
 *               __u32 row indices (modulo rows); output = per sample the
 *               wrapping element-wise sum of its rows (dim __s32).
 * LLM_ATTENTION: causal attention of an inference block (struct
 *               cxl_ccm_attention_args): input = per head q_rows query
 *               vectors, then per head tokens keys, then per head tokens
 *               values (head_dim __s16 each); output = per query row and
 *               head the softmax-weighted sum of the values (head_dim
 *               __s32), with the fixed-point weight of
 *               cxl_ccm_attention_weight(); record c holds block c / heads
 *               of head c % heads.
 * The others are the workloads of the AXLE evaluation (Table IV).
 */
#define CXL_CCM_KERNEL_NOP		0
#define CXL_CCM_KERNEL_STREAM_XFORM	1
#define CXL_CCM_KERNEL_KNN		2
#define CXL_CCM_KERNEL_SSSP		3
#define CXL_CCM_KERNEL_PAGERANK		4
#define CXL_CCM_KERNEL_SSB_Q1_1		5
#define CXL_CCM_KERNEL_SSB_Q1_2		6
#define CXL_CCM_KERNEL_LLM_ATTENTION	7
#define CXL_CCM_KERNEL_DLRM_SLS		8
#define CXL_CCM_KERNEL_ID_LIMIT		64
#define CXL_CCM_KNN_MAX_DIM		4096
#define CXL_CCM_SLS_MAX_DIM		512
#define CXL_CCM_ATTENTION_MAX_HEAD_DIM	256
#define CXL_CCM_ATTENTION_MAX_HEADS	64

/* struct cxl_ccm_stream_xform_args.op */
#define CXL_CCM_XFORM_OP_COPY		0	/* out = in */
#define CXL_CCM_XFORM_OP_XOR		1	/* out = in ^ operand */
#define CXL_CCM_XFORM_OP_ADD		2	/* out = in + operand (wrapping) */

/* Status of a launch (struct cxl_ccm_metadata_record.status). */
#define CXL_CCM_STATUS_OK		0
#define CXL_CCM_STATUS_BAD_KERNEL	1	/* unknown or unimplemented kernel */
#define CXL_CCM_STATUS_BAD_ARGS		2	/* argument block invalid */
#define CXL_CCM_STATUS_BAD_RANGE	3	/* input/output outside the tenant */
#define CXL_CCM_STATUS_BAD_PACKET	4	/* malformed launch */
#define CXL_CCM_STATUS_DMA_FAULT	5	/* a DMA transfer failed */
#define CXL_CCM_STATUS_BAD_CONFIG	6	/* tenant configuration refused */
#define CXL_CCM_STATUS_BAD_DESCRIPTOR	7	/* DMA descriptor table refused */
#define CXL_CCM_STATUS_ABORTED		8	/* tenant disabled before completion */
#define CXL_CCM_STATUS_BAD_COMMAND	9	/* mailbox command refused */

/* struct cxl_ccm_metadata_record.flags */
#define CXL_CCM_MD_FLAG_FINAL		(1 << 0)	/* last record of its launch */
#define CXL_CCM_MD_FLAG_ERROR		(1 << 1)	/* launch failed: see status */

/**
 * struct cxl_ccm_metadata_record - one partial result (a metadata ring slot)
 * @seq: the free-running metadata index of this record; a different value in
 *	the slot of index i means a stale or torn record (a bug)
 * @tag: the launch tag (struct cxl_ccm_launch.tag) of the result
 * @payload_index: free-running payload index of the first payload slot
 * @length: payload bytes; the payload occupies ceil(length / slot_size)
 *	consecutive slots (wrapping at the ring end) of its own; a record of
 *	length 0 (only with CXL_CCM_MD_FLAG_FINAL) occupies none
 * @result_offset: byte offset of this result in the launch's output
 * @checksum: CRC32C of the payload bytes (cxl_ccm_crc32c())
 * @flags: CXL_CCM_MD_FLAG_*
 * @status: CXL_CCM_STATUS_*, nonzero only with CXL_CCM_MD_FLAG_ERROR
 */
struct cxl_ccm_metadata_record {
	__u32 seq;
	__u32 tag;
	__u32 payload_index;
	__u32 length;
	__u64 result_offset;
	__u32 checksum;
	__u16 flags;
	__u16 status;
};

/**
 * struct cxl_ccm_ring_header - a result ring's header, one cache line
 * @tail: free-running tail, written by the device after the slots it
 *	publishes; load it with acquire semantics, then a read barrier (above)
 * @capacity: slots in the ring, a power of two
 * @slot_size: bytes per slot
 * @reserved0: 0
 * @reserved: 0
 */
struct cxl_ccm_ring_header {
	__u32 tail;
	__u32 capacity;
	__u32 slot_size;
	__u32 reserved0;
	__u64 reserved[6];
};

/**
 * struct cxl_ccm_launch_header - the launch ring's header, one cache line
 * @head: free-running count of launch packets the device has taken
 * @slots: CXL_CCM_LAUNCH_SLOTS
 * @reserved: 0
 */
struct cxl_ccm_launch_header {
	__u32 head;
	__u32 slots;
	__u64 reserved[7];
};

/**
 * struct cxl_ccm_ring_headers - the page at CXL_CCM_MMAP_HEADERS
 * @metadata: the metadata ring; poll metadata.tail
 * @payload: the payload ring
 * @launch: the launch ring (used by the driver)
 * @reserved: 0
 */
struct cxl_ccm_ring_headers {
	struct cxl_ccm_ring_header metadata;
	struct cxl_ccm_ring_header payload;
	struct cxl_ccm_launch_header launch;
	__u64 reserved[8];
};

/**
 * struct cxl_ccm_sssp_args - arguments of CXL_CCM_KERNEL_SSSP
 * @vertices: vertices of the graph
 * @edges: edges (the input is (vertices + 1 + 2 * edges) * 4 + vertices * 8
 *	bytes; offsets beyond @edges are clamped, sources taken modulo
 *	@vertices)
 * @chunk_vertices: vertices per record (8 bytes each, at most the streaming
 *	factor); 0 means as many as the streaming factor holds
 * @reserved0: 0
 * @reserved: 0
 */
struct cxl_ccm_sssp_args {
	__u32 vertices;
	__u32 edges;
	__u32 chunk_vertices;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct cxl_ccm_pagerank_args - arguments of CXL_CCM_KERNEL_PAGERANK
 * @vertices: vertices of the graph
 * @edges: edges (the input is (vertices + 1 + edges) * 4 + vertices * 8
 *	bytes; offsets beyond @edges are clamped, sources taken modulo
 *	@vertices)
 * @chunk_vertices: vertices per record (8 bytes each, at most the streaming
 *	factor); 0 means as many as the streaming factor holds
 * @reserved0: 0
 * @reserved: 0
 */
struct cxl_ccm_pagerank_args {
	__u32 vertices;
	__u32 edges;
	__u32 chunk_vertices;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct cxl_ccm_sls_args - arguments of CXL_CCM_KERNEL_DLRM_SLS
 * @dim: elements per embedding vector, 1 to CXL_CCM_SLS_MAX_DIM
 * @rows: rows of the table
 * @samples: index lists after the table
 * @pooling: indices per sample
 * @chunk_samples: samples per record (dim * 4 bytes each, at most the
 *	streaming factor); 0 means as many as the streaming factor holds
 * @reserved0: 0
 * @reserved: 0
 *
 * The input is (rows * dim + samples * pooling) * 4 bytes.
 */
struct cxl_ccm_sls_args {
	__u32 dim;
	__u32 rows;
	__u32 samples;
	__u32 pooling;
	__u32 chunk_samples;
	__u32 reserved0;
	__u64 reserved;
};

/**
 * struct cxl_ccm_attention_args - arguments of CXL_CCM_KERNEL_LLM_ATTENTION
 * @tokens: key and value vectors per head (the context)
 * @q_first: position of the first query row (q_first + q_rows <= tokens)
 * @q_rows: query rows of the launch; row i attends to keys 0..q_first + i
 * @heads: heads, 1 to CXL_CCM_ATTENTION_MAX_HEADS
 * @head_dim: elements per vector, 1 to CXL_CCM_ATTENTION_MAX_HEAD_DIM
 * @chunk_rows: query rows per record (head_dim * 4 bytes each, at most the
 *	streaming factor); 0 means as many as the streaming factor holds
 * @shift: right shift of (max score - score) before the weight, below 64
 * @reserved: 0
 *
 * The input is heads * (q_rows + 2 * tokens) * head_dim * 2 bytes; the
 * output heads * q_rows * head_dim * 4 bytes, block by block (chunk_rows
 * query rows), head by head within a block.
 */
struct cxl_ccm_attention_args {
	__u32 tokens;
	__u32 q_first;
	__u32 q_rows;
	__u32 heads;
	__u32 head_dim;
	__u32 chunk_rows;
	__u32 shift;
	__u32 reserved;
};

/**
 * struct cxl_ccm_ssb_args - arguments of CXL_CCM_KERNEL_SSB_Q1_1 and _Q1_2
 * @rows: lineorder rows of 16 bytes (the input is rows * 16 bytes)
 * @chunk_rows: rows per record (16 bytes each); 0 means 4096
 * @date_lo: lowest orderdate (inclusive)
 * @date_hi: highest orderdate (inclusive)
 * @discount_lo: lowest discount (inclusive)
 * @discount_hi: highest discount (inclusive)
 * @quantity_lo: lowest quantity (inclusive)
 * @quantity_hi: highest quantity (inclusive)
 */
struct cxl_ccm_ssb_args {
	__u32 rows;
	__u32 chunk_rows;
	__u32 date_lo;
	__u32 date_hi;
	__u32 discount_lo;
	__u32 discount_hi;
	__u32 quantity_lo;
	__u32 quantity_hi;
};

/**
 * struct cxl_ccm_knn_args - arguments of CXL_CCM_KERNEL_KNN
 * @dim: elements per vector, 1 to CXL_CCM_KNN_MAX_DIM
 * @rows: vectors after the query (the input is (rows + 1) * dim * 4 bytes)
 * @chunk_rows: rows per record (8 bytes each, at most the streaming factor);
 *	0 means as many as the streaming factor holds
 * @reserved0: 0
 * @reserved: 0
 */
struct cxl_ccm_knn_args {
	__u32 dim;
	__u32 rows;
	__u32 chunk_rows;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct cxl_ccm_stream_xform_args - arguments of CXL_CCM_KERNEL_STREAM_XFORM
 * @op: CXL_CCM_XFORM_OP_*
 * @chunk_size: output bytes per record, a multiple of 4, at most the
 *	streaming factor; 0 means the streaming factor
 * @operand: the operand of @op
 * @reserved0: 0
 * @reserved: 0
 */
struct cxl_ccm_stream_xform_args {
	__u32 op;
	__u32 chunk_size;
	__u32 operand;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct cxl_ccm_info - CXL_CCM_IOC_INFO: what the device supports
 * @flags: in: 0
 * @abi_version: out: CXL_CCM_ABI_VERSION
 * @device_version: out: the device's ABI version (major << 16 | minor)
 * @max_tenants: out: tenants the device serves
 * @caps: out: CXL_CCM_CAP_*
 * @kernels: out: bit k set if kernel id k is implemented
 * @mem_size: out: device memory bytes
 * @min_slot_size: out: smallest payload slot size
 * @max_slot_size: out: largest payload slot size
 * @max_ring_slots: out: largest ring capacity in slots
 * @launch_slots: out: launches outstanding at most
 * @max_release: out: CXL_CCM_RELEASE_MAX
 * @reserved0: out: 0
 * @reserved: out: 0
 */
struct cxl_ccm_info {
	__u32 flags;
	__u32 abi_version;
	__u32 device_version;
	__u32 max_tenants;
	__u64 caps;
	__u64 kernels;
	__u64 mem_size;
	__u32 min_slot_size;
	__u32 max_slot_size;
	__u32 max_ring_slots;
	__u32 launch_slots;
	__u32 max_release;
	__u32 reserved0;
	__u64 reserved[4];
};

/**
 * struct cxl_ccm_configure - CXL_CCM_IOC_CONFIGURE: become a tenant
 * @flags: in: 0 or CXL_CCM_CONFIGURE_FIFO
 * @mode: in: CXL_CCM_MODE_*
 * @slot_size: in: payload slot size (the DMA slot size), a power of two;
 *	0 means CXL_CCM_DEFAULT_SLOT_SIZE
 * @metadata_slots: in: metadata ring capacity, a power of two
 * @payload_slots: in: payload ring capacity, a power of two
 * @streaming_factor: in: bytes the device accumulates before it streams, a
 *	multiple of @slot_size that fits the payload ring; 0 means one slot
 * @streaming_order: in: CXL_CCM_ORDER_*
 * @index_base: in: initial value of every counter (0, or near 2^32 to test
 *	the wrap)
 * @poll_interval_ns: in: the driver's polling interval for
 *	CXL_CCM_IOC_WAIT (AXLE) and the mailbox (RP); 0 busy-polls, except
 *	in RP, where 0 is the device's remote polling interval (1 us)
 * @input_size: in: bytes of the input buffer in device memory (page
 *	multiple, at most CXL_CCM_MMAP_REGION_SIZE)
 * @tenant: out: the tenant number
 * @reserved0: in: 0
 * @headers_size: out: mmap length at CXL_CCM_MMAP_HEADERS
 * @metadata_ring_size: out: mmap length at CXL_CCM_MMAP_METADATA
 * @payload_ring_size: out: mmap length at CXL_CCM_MMAP_PAYLOAD
 * @reserved: in: 0
 *
 * Once per open file; EBUSY afterwards.
 */
struct cxl_ccm_configure {
	__u32 flags;
	__u32 mode;
	__u32 slot_size;
	__u32 metadata_slots;
	__u32 payload_slots;
	__u32 streaming_factor;
	__u32 streaming_order;
	__u32 index_base;
	__u64 poll_interval_ns;
	__u64 input_size;
	__u32 tenant;
	__u32 reserved0;
	__u64 headers_size;
	__u64 metadata_ring_size;
	__u64 payload_ring_size;
	__u64 reserved[4];
};

/* struct cxl_ccm_launch.flags */
#define CXL_CCM_LAUNCH_SYNC		(1 << 0)	/* return at completion (BS) */

/**
 * struct cxl_ccm_launch - CXL_CCM_IOC_LAUNCH: launch a kernel
 * @kernel_id: in: CXL_CCM_KERNEL_*
 * @flags: in: CXL_CCM_LAUNCH_*
 * @input_offset: in: offset of the input in the input buffer
 * @input_size: in: input bytes (at most 2^32 - 1)
 * @arg_size: in: bytes of @args used, at most CXL_CCM_MAX_ARG_SIZE
 * @tag: out: the launch tag, carried by every record of this launch
 * @args: in: the kernel's argument block, little-endian
 * @reserved: in: 0
 *
 * Blocks while CXL_CCM_LAUNCH_SLOTS launches are outstanding.
 */
struct cxl_ccm_launch {
	__u32 kernel_id;
	__u32 flags;
	__u64 input_offset;
	__u64 input_size;
	__u32 arg_size;
	__u32 tag;
	__u8 args[32];
	__u64 reserved[2];
};

/* struct cxl_ccm_release.flags */
#define CXL_CCM_RELEASE_METADATA	(1 << 0)	/* metadata_head is valid */
#define CXL_CCM_RELEASE_PUBLISH		(1 << 1)	/* publish the heads now */
#define CXL_CCM_RELEASE_MAX		4096		/* entries per call */

/**
 * struct cxl_ccm_release_entry - the payload of one consumed record
 * @payload_index: the record's payload_index
 * @length: the record's length: ceil(length / slot_size) slots are released
 */
struct cxl_ccm_release_entry {
	__u32 payload_index;
	__u32 length;
};

/**
 * struct cxl_ccm_release - CXL_CCM_IOC_RELEASE: return consumed records
 * @entries: in: pointer to @count struct cxl_ccm_release_entry
 * @count: in: entries, at most CXL_CCM_RELEASE_MAX (0: metadata or publish
 *	only)
 * @flags: in: CXL_CCM_RELEASE_*
 * @metadata_head: in (with CXL_CCM_RELEASE_METADATA): every record below
 *	this free-running index has been copied; never past the tail
 * @processed: out: entries applied (on EINVAL, the index of the bad entry)
 * @metadata_head_published: out: metadata head last given to the device
 * @payload_head_published: out: payload head last given to the device
 * @reserved: in: 0
 *
 * Payload may be released in any order; the payload head advances over the
 * contiguous released prefix only (the gap-aware head). An entry of length 0
 * (an empty record) releases nothing. Releasing a slot that was not received
 * or is already released fails with EINVAL; the out fields are written
 * then too.
 */
struct cxl_ccm_release {
	__u64 entries;
	__u32 count;
	__u32 flags;
	__u32 metadata_head;
	__u32 processed;
	__u32 metadata_head_published;
	__u32 payload_head_published;
	__u64 reserved[2];
};

/* struct cxl_ccm_stats.flags */
#define CXL_CCM_STATS_RESET		(1 << 0)	/* zero after reading */

/**
 * struct cxl_ccm_stats - CXL_CCM_IOC_STATS: the tenant's counters
 * @flags: in: CXL_CCM_STATS_*
 * @tenant: out: the tenant number
 * @launched: out: kernels launched
 * @launches_completed: out: launches whose final record was seen
 * @records: out: metadata records received
 * @payload_bytes: out: payload bytes received
 * @backpressure_waits: out: launches that waited for a free launch slot
 * @backpressure_ns: out: nanoseconds spent in those waits
 * @credit_stalls: out: batches the device held back for lack of credit
 * @dma_batches: out: batches the device back-streamed
 * @polls: out: polls of the metadata tail, mailbox or sync completion
 * @empty_polls: out: polls that found nothing new
 * @credits_published: out: head stores into the device
 * @interrupts: out: interrupts handled
 * @errors: out: failed launches (not those a signal interrupted), rejected
 *	releases, device errors
 * @ccm_busy_ns: out: nanoseconds the device had work it could do for this
 *	tenant (the rest of a run is CCM idle time; results held back for
 *	lack of credit count as idle); 0 if the device does not report it
 * @credit_wait_ns: out: nanoseconds the device held results back for lack
 *	of credit
 * @host_stall_ns: out: nanoseconds host cores spent stalled on the link for
 *	the tenant: the driver's CXL.mem and CXL.io accesses (launch and credit
 *	stores, remote polls, result loads) and the BS store's wait
 * @unpublished: out: host stores into device memory that the device consumed
 *	for the tenant before the host had made them visible (a driver bug on
 *	host-only coherent memory; only a software device that models it can
 *	count this, hardware reports 0); not reset by CXL_CCM_STATS_RESET
 * @model_deficit_ns: out: nanoseconds by which a software device that models
 *	its compute finished this tenant's chunks later than its model says the
 *	modelled CCM would have, summed over the late chunks; nonzero means a
 *	run measured the emulator rather than the model; hardware reports 0
 * @model_late_chunks: out: the chunks @model_deficit_ns counts
 */
struct cxl_ccm_stats {
	__u32 flags;
	__u32 tenant;
	__u64 launched;
	__u64 launches_completed;
	__u64 records;
	__u64 payload_bytes;
	__u64 backpressure_waits;
	__u64 backpressure_ns;
	__u64 credit_stalls;
	__u64 dma_batches;
	__u64 polls;
	__u64 empty_polls;
	__u64 credits_published;
	__u64 interrupts;
	__u64 errors;
	__u64 ccm_busy_ns;
	__u64 credit_wait_ns;
	__u64 host_stall_ns;
	__u64 unpublished;
	__u64 model_deficit_ns;
	__u64 model_late_chunks;
};

/*
 * struct cxl_ccm_configure.flags: schedule the tenant's launches first in,
 * first out (a launch's chunks before the next one's); an out-of-order tenant
 * is otherwise served round-robin over its launches. In-order streaming is
 * always first in, first out.
 */
#define CXL_CCM_CONFIGURE_FIFO		(1U << 0)

#define CXL_CCM_WAIT_FOREVER		(~0ULL)	/* struct cxl_ccm_wait.timeout_ns */
#define CXL_CCM_WAIT_FLAG_DEADLOCK	(1U << 0)	/* struct cxl_ccm_wait.flags */

/**
 * struct cxl_ccm_wait - CXL_CCM_IOC_WAIT: wait for ready records
 * @min_records: in: records to wait for, at least 1
 * @metadata_head: in: the caller's metadata head
 * @timeout_ns: in: 0 checks once; CXL_CCM_WAIT_FOREVER
 * @flags: in: 0 or CXL_CCM_WAIT_FLAG_DEADLOCK
 * @ready: out: metadata_tail - metadata_head
 * @metadata_tail: out: the tail seen
 * @reserved0: in: 0
 * @reserved: in: 0
 *
 * Returns 0 once @ready >= @min_records, or fails with EAGAIN (@timeout_ns
 * 0 and not ready), ETIMEDOUT, EINTR (a signal ended a finite wait; a
 * CXL_CCM_WAIT_FOREVER wait is restarted under SA_RESTART) - the out fields
 * are written in these four cases and on EDEADLK below - EIO (the device
 * stopped the tenant or broke the ring protocol) or ENODEV (unbound).
 * @metadata_head must lie between the head last released with
 * CXL_CCM_RELEASE_METADATA and the tail when the call starts (else EINVAL);
 * if another thread releases past it meanwhile, the wait still ends once
 * @min_records lie past it, and @ready then counts released records too.
 * With CXL_CCM_WAIT_FLAG_DEADLOCK (the caller is the only one to release) it
 * fails with EDEADLK (out fields written) instead of waiting when no record
 * can arrive before the caller releases: the producer holds a result it has
 * no room for under the released heads.
 */
struct cxl_ccm_wait {
	__u32 min_records;
	__u32 metadata_head;
	__u64 timeout_ns;
	__u32 flags;
	__u32 ready;
	__u32 metadata_tail;
	__u32 reserved0;
	__u64 reserved[2];
};

/*
 * mmap offsets. Each starts a window of CXL_CCM_MMAP_REGION_SIZE bytes; a
 * mapping lies within one window.
 */
#define CXL_CCM_MMAP_HEADERS		0x00000000ULL	/* ring headers, RO */
#define CXL_CCM_MMAP_METADATA		0x10000000ULL	/* metadata ring, RO */
#define CXL_CCM_MMAP_PAYLOAD		0x20000000ULL	/* payload ring, RO */
#define CXL_CCM_MMAP_INPUT		0x30000000ULL	/* input buffer, RW */
#define CXL_CCM_MMAP_REGION_SIZE	0x10000000ULL

/* 0xCF is shared with fs/smb/client/cifs_ioctl.h, which uses numbers 3-12. */
#define CXL_CCM_IOC_MAGIC		0xCF
#define CXL_CCM_IOC_INFO	_IOWR(CXL_CCM_IOC_MAGIC, 0x80, struct cxl_ccm_info)
#define CXL_CCM_IOC_CONFIGURE	_IOWR(CXL_CCM_IOC_MAGIC, 0x81, struct cxl_ccm_configure)
#define CXL_CCM_IOC_LAUNCH	_IOWR(CXL_CCM_IOC_MAGIC, 0x82, struct cxl_ccm_launch)
#define CXL_CCM_IOC_RELEASE	_IOWR(CXL_CCM_IOC_MAGIC, 0x83, struct cxl_ccm_release)
#define CXL_CCM_IOC_STATS	_IOWR(CXL_CCM_IOC_MAGIC, 0x84, struct cxl_ccm_stats)
#define CXL_CCM_IOC_WAIT	_IOWR(CXL_CCM_IOC_MAGIC, 0x85, struct cxl_ccm_wait)

/*
 * The record checksum: CRC32C (Castagnoli; reflected polynomial below,
 * initial value and final XOR 0xffffffff). For a payload that wraps around the
 * ring end: ~cxl_ccm_crc32c_update(cxl_ccm_crc32c_update(~0U, a, la), b, lb).
 */
#define CXL_CCM_CRC32C_POLY		0x82f63b78U

static __inline__ __u32 cxl_ccm_crc32c_update(__u32 crc, const void *data,
					      __u64 len)
{
	const unsigned char *p = (const unsigned char *)data;
	int bit;

	while (len--) {
		crc ^= *p++;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (CXL_CCM_CRC32C_POLY & (0U - (crc & 1)));
	}
	return crc;
}

static __inline__ __u32 cxl_ccm_crc32c(const void *data, __u64 len)
{
	return ~cxl_ccm_crc32c_update(~0U, data, len);
}

/*
 * The softmax weight of CXL_CCM_KERNEL_LLM_ATTENTION for a score delta below
 * the row's maximum (after the shift), in 1/16 units: 2^(-delta / 16) in Q16,
 * linear between integer powers.
 */
static __inline__ __u64 cxl_ccm_attention_weight(__u64 delta)
{
	__u64 n = delta >> 4, f = delta & 15;

	return n >= 32 ? 0 : ((32 - f) << 11) >> n;
}

#endif /* _UAPI_LINUX_CXL_CCM_H */
