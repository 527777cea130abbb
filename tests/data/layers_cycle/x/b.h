int uk__b_next(int v);
