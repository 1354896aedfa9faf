//! The invariant checker (the list is in the parent module's docs).

use std::collections::BTreeSet;

use super::{BlockHeap, Kind, NO_SLOT};
use crate::codec::Encoding;
use crate::handle::Handle;

impl BlockHeap {
    /// Checks invariants C1–C7 for every block and H1–H13 for the heap.
    /// Decompresses every compressed-only block into a scratch buffer, so it
    /// is slow; meant for tests.
    // Indexing by block number reads better here than zipped iterators: the
    // loop body needs the codec mutably while looking at the tables.
    #[allow(clippy::needless_range_loop)]
    pub fn check_invariants(&mut self) -> std::result::Result<(), String> {
        let mut total_live = 0u64;
        let mut comp_sum = 0u64;
        let mut room = BTreeSet::new();
        let mut pinned = 0;
        for (i, s) in self.slots.iter().enumerate() {
            let m = self
                .blocks
                .get(s.block as usize)
                .ok_or("H3: slot names a missing block")?;
            if m.slot as usize != i {
                return Err(format!("H3: slot {i} and block {} disagree", s.block));
            }
            if s.pins > 0 {
                pinned += 1;
            }
        }
        if self.capacity < self.base_capacity
            || self.capacity > self.base_capacity + self.max_growth
        {
            return Err("H4: cache grew past its bounds".into());
        }
        if self.slots.len() > self.capacity + pinned {
            return Err(format!(
                "H4: {} cached blocks, capacity {} with {pinned} pinned",
                self.slots.len(),
                self.capacity
            ));
        }
        let mut vacant_seen = vec![false; self.blocks.len()];
        for &v in &self.vacant {
            let seen = vacant_seen
                .get_mut(v as usize)
                .ok_or("H8: vacant list names a missing block")?;
            if *seen {
                return Err(format!("H8: block {v} listed twice as vacant"));
            }
            *seen = true;
        }
        let mut tmp = Vec::new();
        for b in 0..self.blocks.len() {
            let m = &self.blocks[b];
            if let Some(c) = &m.comp {
                comp_sum += c.len() as u64;
            }
            if m.kind == Kind::Vacant {
                if m.comp.is_some() || m.slot != NO_SLOT || !vacant_seen[b] || m.largest != 0 {
                    return Err(format!("H8: vacant block {b} holds something"));
                }
                continue;
            }
            if vacant_seen[b] {
                return Err(format!("H8: block {b} in use but listed as vacant"));
            }
            if m.slot != NO_SLOT {
                let s = self
                    .slots
                    .get(m.slot as usize)
                    .ok_or("H3: block names a missing slot")?;
                if s.block as usize != b {
                    return Err(format!("H3: block {b} and its slot disagree"));
                }
            } else if m.comp.is_none() && self.pending.iter().all(|p| p.block as usize != b) {
                return Err(format!(
                    "H1: block {b} is neither cached, compressed nor waiting for the compressor"
                ));
            }
            let len = match m.kind {
                Kind::Large(n) => n,
                _ => self.layout.block_size,
            };
            if let Some(c) = &m.comp {
                let normal = m.kind == Kind::Normal;
                self.packer
                    .unpack(&self.layout, (m.enc, c), len, normal, &mut tmp)
                    .map_err(|e| format!("H2: block {b} does not decompress: {e}"))?;
                if m.slot != NO_SLOT && **self.slots[m.slot as usize].buf != tmp[..] {
                    return Err(format!("H2: clean block {b} differs from its copy"));
                }
            }
            if m.slot == NO_SLOT && m.comp.is_none() {
                let pos = self.pending_of(b as u32).ok_or("H1: lost block")?;
                let mut img = Vec::new();
                self.pending_image(pos, &mut img)
                    .map_err(|e| format!("H10: waiting block {b} damaged: {e}"))?;
                tmp = img;
            }
            let m = &self.blocks[b];
            let image: &[u8] = if m.slot != NO_SLOT {
                &self.slots[m.slot as usize].buf
            } else {
                &tmp
            };
            if m.untidy && (m.slot == NO_SLOT || m.comp.is_some()) {
                return Err(format!("H13: untidy block {b} is not cached and dirty"));
            }
            if !m.untidy && m.lazy_freed != 0 {
                return Err(format!("H13: tidy block {b} counts lazily freed bytes"));
            }
            // An untidy block is checked as its tidy will leave it.
            let tidied;
            let image: &[u8] = if m.untidy {
                let mut copy = image.to_vec();
                self.layout.tidy(&mut copy);
                tidied = copy;
                &tidied
            } else {
                image
            };
            match m.kind {
                Kind::Normal => {
                    let r = self
                        .layout
                        .check(image)
                        .map_err(|e| format!("block {b}: {e}"))?;
                    if r.used != m.live {
                        return Err(format!("H6: block {b} live count {} != {}", m.live, r.used));
                    }
                    let recorded = m.largest as usize;
                    if r.largest_free != recorded && !(m.untidy && r.largest_free > recorded) {
                        return Err(format!("H5: block {b} largest free out of date"));
                    }
                    if m.largest > 0 && m.slot == NO_SLOT {
                        room.insert(((m.largest as usize / self.granule) as u32, b as u32));
                    }
                }
                Kind::Large(n) => {
                    if image.len() != n || m.live != 1 {
                        return Err(format!("block {b}: large block damaged"));
                    }
                }
                Kind::Vacant => {}
            }
            total_live += m.live as u64;
        }
        if room != self.room {
            return Err("H5: room index out of date".into());
        }
        for (k, p) in self.pending.iter().enumerate() {
            let m = self
                .blocks
                .get(p.block as usize)
                .ok_or("H10: waiting request names a missing block")?;
            if m.kind == Kind::Vacant || m.slot != NO_SLOT || m.comp.is_some() {
                return Err(format!(
                    "H10: block {} waits for the compressor but is vacant, cached or stored",
                    p.block
                ));
            }
            if self.pending[..k]
                .iter()
                .any(|q| q.block == p.block || q.ver == p.ver)
            {
                return Err(format!("H10: block {} waits twice", p.block));
            }
        }
        if self.pending.len() > self.max_pending {
            return Err("H10: more blocks waiting than the queue allows".into());
        }
        let mut scratch = Vec::new();
        for k in 0..self.ahead.len() {
            let a = &self.ahead[k];
            let m = self
                .blocks
                .get(a.block as usize)
                .ok_or("H11: read-ahead names a missing block")?;
            if m.kind == Kind::Vacant || m.slot != NO_SLOT || m.comp.is_none() {
                return Err(format!(
                    "H11: block {} read ahead but vacant, cached or not stored",
                    a.block
                ));
            }
            if self.ahead[..k]
                .iter()
                .any(|q| q.block == a.block || q.ver == a.ver)
            {
                return Err(format!("H11: block {} read ahead twice", a.block));
            }
            if matches!(a.image, Some(Some(_))) {
                let b = a.block;
                self.unpack_stored(b, &mut scratch)
                    .map_err(|e| format!("H11: block {b} unreadable: {e}"))?;
                if self.ahead[k].image.as_ref().and_then(|i| i.as_ref()) != Some(&scratch) {
                    return Err(format!("H11: block {b} read ahead differs"));
                }
            }
        }
        if self.ahead.len() > self.max_ahead {
            return Err("H11: more blocks read ahead than allowed".into());
        }
        if total_live != self.live_nodes {
            return Err("H6: total live count wrong".into());
        }
        if comp_sum != self.compressed_bytes {
            return Err("H7: compressed-bytes counter wrong".into());
        }
        self.check_budget()?;
        let entries = self.node_cache.entries();
        let mut bytes = 0;
        let mut per_block = vec![0u32; self.blocks.len()];
        for (k, copy) in entries {
            bytes += copy.len();
            let (_, slot, off, len) = self
                .resolve(Handle::from_raw(k))
                .map_err(|e| format!("H9: cached copy of a dead node {k:#x}: {e}"))?;
            if self.slots[slot].buf[off..off + len] != copy[..] {
                return Err(format!("H9: cached copy of {k:#x} is stale"));
            }
            if let Some((b, _)) = Handle::from_raw(k).parts() {
                per_block[b as usize] += 1;
            }
        }
        if self
            .blocks
            .iter()
            .zip(&per_block)
            .any(|(m, n)| m.noted != *n)
        {
            return Err("H9: per-block node-cache counts wrong".into());
        }
        if bytes != self.node_cache.bytes() || bytes > self.node_cache.limit() {
            return Err("H9: node cache over budget or miscounted".into());
        }
        Ok(())
    }
}

impl BlockHeap {
    /// H12: the memory target's totals are true: the live block bytes are
    /// the image bytes of the blocks in use, and the lz4 count is the
    /// number of blocks stored in lz4 form.
    fn check_budget(&self) -> std::result::Result<(), String> {
        let mut live = 0u64;
        let mut fast = 0u64;
        for m in &self.blocks {
            live += match m.kind {
                Kind::Vacant => 0,
                Kind::Normal => self.layout.block_size as u64,
                Kind::Large(n) => n as u64,
            };
            if m.comp.is_some() && m.enc == Encoding::Fast {
                fast += 1;
            }
        }
        if live != self.budget.live_bytes {
            return Err(format!(
                "H12: live block bytes {} recorded as {}",
                live, self.budget.live_bytes
            ));
        }
        if fast != self.budget.fast_blocks {
            return Err(format!(
                "H12: {fast} lz4 blocks recorded as {}",
                self.budget.fast_blocks
            ));
        }
        Ok(())
    }
}
