//! Preallocated packet buffers: one contiguous block cut into fixed-size slots, referenced by
//! index, and a free list. Nothing is allocated per packet; when every slot is in use an arrival
//! is dropped (and counted) rather than the pool grown.

pub type Slot = u32;

pub struct Pool {
    data: Box<[u8]>,
    slot_size: usize,
    lens: Box<[u32]>,
    free: Vec<Slot>,
}

impl Pool {
    /// `slots` buffers of `slot_size` bytes each.
    pub fn new(slots: usize, slot_size: usize) -> Self {
        assert!(slots > 0 && slot_size > 0 && slots <= u32::MAX as usize);
        Pool {
            data: vec![0u8; slots * slot_size].into_boxed_slice(),
            slot_size,
            lens: vec![0u32; slots].into_boxed_slice(),
            // Popped from the end: slot 0 first.
            free: (0..slots as Slot).rev().collect(),
        }
    }
    pub fn capacity(&self) -> usize {
        self.lens.len()
    }
    pub fn slot_size(&self) -> usize {
        self.slot_size
    }
    pub fn in_use(&self) -> usize {
        self.capacity() - self.free.len()
    }
    /// A free slot, or `None` if all are in use.
    pub fn alloc(&mut self) -> Option<Slot> {
        self.free.pop()
    }
    pub fn release(&mut self, s: Slot) {
        debug_assert!(!self.free.contains(&s), "slot {s} released twice");
        self.free.push(s);
    }
    fn range(&self, s: Slot) -> std::ops::Range<usize> {
        let start = s as usize * self.slot_size;
        start..start + self.slot_size
    }
    /// The whole slot, to read a packet into; then [`Pool::set_len`].
    pub fn buf_mut(&mut self, s: Slot) -> &mut [u8] {
        let r = self.range(s);
        &mut self.data[r]
    }
    pub fn set_len(&mut self, s: Slot, len: usize) {
        assert!(len <= self.slot_size);
        self.lens[s as usize] = len as u32;
    }
    pub fn len(&self, s: Slot) -> usize {
        self.lens[s as usize] as usize
    }
    pub fn packet(&self, s: Slot) -> &[u8] {
        let start = s as usize * self.slot_size;
        &self.data[start..start + self.len(s)]
    }
    pub fn packet_mut(&mut self, s: Slot) -> &mut [u8] {
        let start = s as usize * self.slot_size;
        let len = self.len(s);
        &mut self.data[start..start + len]
    }
    /// Copies `bytes` into a fresh slot (tests and tools; the relay reads straight into slots).
    pub fn store(&mut self, bytes: &[u8]) -> Option<Slot> {
        let s = self.alloc()?;
        self.buf_mut(s)[..bytes.len()].copy_from_slice(bytes);
        self.set_len(s, bytes.len());
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_exhaustion_is_reported() {
        let mut p = Pool::new(2, 16);
        let a = p.store(b"hello").unwrap();
        let b = p.store(b"world!").unwrap();
        assert_ne!(a, b);
        assert_eq!((p.packet(a), p.packet(b)), (&b"hello"[..], &b"world!"[..]));
        assert_eq!(p.alloc(), None);
        p.release(a);
        assert_eq!(p.in_use(), 1);
        let c = p.store(b"x").unwrap();
        assert_eq!(c, a);
        assert_eq!(p.packet(c), b"x");
    }
}
