// The style sheet of the OGC API's HTML documents (ogcdoc.css), as its own
// bundle: the documents without a map link only its style sheet (their
// policy runs no script); the pages with a map have it in the ogc bundle.
import './ogcdoc.css';
