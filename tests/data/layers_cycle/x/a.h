int uk__a_twice(int v);
