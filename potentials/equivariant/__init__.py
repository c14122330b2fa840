"""SO(3)/O(3)-equivariant potential (features up to l = 2), see docs/equivariant.md."""
