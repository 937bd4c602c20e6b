#!/usr/bin/python3
"""Write the hand-made seed files of the fixture fuzzer (tests/fuzz/corpus/fixture/).

These are not expected values: they are small HDF5 files that reach the
reader's other paths, for libFuzzer to start mutating from. The book
fixtures copied next to them cover the ordinary layout.

    /usr/bin/python3 tools/cases/fuzz_seeds.py [DIR]   (default: tests/fuzz/corpus/fixture)

  edge_sweep.h5    two configuration groups (as fixtures/sweep.h5), a dataset
                   and a soft link beside them at the root
  edge_latest.h5   libver='latest' (v3 superblock, checksummed metadata),
                   creation order tracked, fixed-length ASCII strings, an
                   int32 d_out, a scalar, a chunked gzip dataset, a compact
                   one, float64 and int weights, a NaN input, an empty dataset
  edge_empty.h5    a valid file with nothing in it
  edge_sweep_latest.h5
                   edge_sweep.h5's groups in the checksummed layout: libver
                   'latest', fixed-length UTF-8 strings, links and attributes
                   in the object headers (few enough to stay compact), no
                   soft link
"""

import os
import sys

import h5py
import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'fuzz', 'corpus', 'fixture')
f32 = np.float32

with h5py.File(os.path.join(out, 'edge_sweep.h5'), 'w') as f:
    f.attrs['chapter'] = 'ch03_4_2_self_attention_v1,ch03_4_2_self_attention_v2'
    f.attrs['variant'] = 'sweep'
    for name, chapter, t in (('v1_seed1_T2_din3_dout2', 'ch03_4_2_self_attention_v1', 2),
                             ('v2_seed-1_T1_din1_dout1_bias1', 'ch03_4_2_self_attention_v2', 1)):
        g = f.create_group(name)
        g.attrs['chapter'] = chapter
        g.attrs['seed'] = name.split('_')[1][4:]
        g.attrs['skip'] = np.int64(0)
        g.attrs['d_out'] = np.int64(2)
        d = g.create_dataset('inputs', data=np.linspace(-1, 1, t * 3, dtype=f32).reshape(t, 3))
        d.attrs['role'] = 'input'
        w = g.create_dataset('W_query.weight' if chapter.endswith('v2') else 'W_query',
                             data=np.arange(6, dtype=f32).reshape(2, 3) / 7)
        w.attrs['role'] = 'weight'
    f.create_dataset('tensor', data=np.array([0.1, -0.2, 0.3, -0.2, 0.5], dtype=f32)).attrs['role'] = 'input'
    f['link_to_group'] = h5py.SoftLink('/v1_seed1_T2_din3_dout2')

# No timestamps in object headers (v2 headers carry them by default): two
# runs must give the same bytes.
fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
fcpl.set_obj_track_times(False)
fcpl.set_link_creation_order(h5py.h5p.CRT_ORDER_TRACKED | h5py.h5p.CRT_ORDER_INDEXED)
fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
fid = h5py.h5f.create(os.path.join(out, 'edge_latest.h5').encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)
with h5py.File(fid) as f:
    ascii = h5py.string_dtype('ascii', 40)
    f.attrs.create('chapter', 'ch03_4_1_trainable_weights', dtype=ascii)
    f.attrs.create('seed', '-9223372036854775808', dtype=ascii)
    f.attrs['d_out'] = np.int32(2)
    f.attrs['skip'] = np.int64(18)
    x = np.array([[0.43, 0.15, 0.89], [0.55, np.nan, 0.66]], dtype=f32)
    f.create_dataset('inputs', data=x, chunks=(1, 3), compression='gzip', shuffle=True).attrs['role'] = 'input'
    f.create_dataset('W_query', data=np.ones((3, 2), dtype=np.float64)).attrs.create('role', 'weight', dtype=ascii)
    f.create_dataset('W_query.weight', data=np.ones((2, 3), dtype=np.int32))
    f.create_dataset('W_query.bias', data=np.zeros((0,), dtype=f32))
    sid = h5py.h5s.create_simple((5,))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    dcpl.set_obj_track_times(False)  # no timestamps: two runs give the same bytes
    h5py.h5d.create(f.id, b'tensor', h5py.h5t.IEEE_F32LE, sid, dcpl).write(
        h5py.h5s.ALL, h5py.h5s.ALL, np.array([0.1, -0.2, 0.3, -0.2, 0.5], dtype=f32))
    f.create_dataset('attn_score_22', data=f32(1.5)).attrs['role'] = 'output'
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    g = h5py.Group(h5py.h5g.create(f.id, b'group_one', gcpl=gcpl))
    g.attrs.create('chapter', 'x', dtype=ascii)

with h5py.File(os.path.join(out, 'edge_empty.h5'), 'w'):
    pass

def fixed(text):
    """A Python str as a fixed-length UTF-8 string: no global heap."""
    b = text.encode()
    return np.array(b, dtype=h5py.string_dtype('utf-8', len(b)))

fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
fcpl.set_obj_track_times(False)
fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
fid = h5py.h5f.create(os.path.join(out, 'edge_sweep_latest.h5').encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)
with h5py.File(fid) as f:
    f.attrs.create('chapter', fixed('ch03_4_2_self_attention_v1,ch03_4_2_self_attention_v2'))
    f.attrs.create('variant', fixed('sweep'))
    for name, chapter, t in (('v1_seed1_T2_din3_dout2', 'ch03_4_2_self_attention_v1', 2),
                             ('v2_seed-1_T1_din1_dout1_bias1', 'ch03_4_2_self_attention_v2', 1)):
        gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
        gcpl.set_obj_track_times(False)
        g = h5py.Group(h5py.h5g.create(f.id, name.encode(), gcpl=gcpl))
        g.attrs.create('chapter', fixed(chapter))
        g.attrs.create('seed', fixed(name.split('_')[1][4:]))
        g.attrs['skip'] = np.int64(0)
        g.attrs['d_out'] = np.int64(2)
        d = g.create_dataset('inputs', data=np.linspace(-1, 1, t * 3, dtype=f32).reshape(t, 3), track_times=False)
        d.attrs.create('role', fixed('input'))
        w = g.create_dataset('W_query.weight' if chapter.endswith('v2') else 'W_query',
                             data=np.arange(6, dtype=f32).reshape(2, 3) / 7, track_times=False)
        w.attrs.create('role', fixed('weight'))
    d = f.create_dataset('tensor', data=np.array([0.1, -0.2, 0.3, -0.2, 0.5], dtype=f32), track_times=False)
    d.attrs.create('role', fixed('input'))
