//! Drawing a graph as SVG (laid out here, no Graphviz needed) and as DOT.
