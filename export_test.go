package mapcommons

// MedianSortMax lets tests choose MedianOfKeys's way: sorting up to
// *MedianSortMax values, histograms beyond.
var MedianSortMax = &medianSortMax
