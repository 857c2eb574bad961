package neardup;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.MultiBits;
import org.apache.lucene.index.MultiTerms;
import org.apache.lucene.index.PointValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.ArrayUtil;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.IntroSorter;
import org.apache.lucene.util.StringHelper;
import org.apache.solr.common.IteratorWriter;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.core.CloseHook;
import org.apache.solr.core.SolrCore;
import org.apache.solr.handler.RequestHandlerBase;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.response.SolrQueryResponse;
import org.apache.solr.schema.SchemaField;
import org.apache.solr.security.AuthorizationContext;
import org.apache.solr.search.SolrIndexSearcher;
import org.apache.solr.security.PermissionNameProvider;
import org.apache.solr.util.RefCounted;
import org.apache.solr.util.plugin.SolrCoreAware;

/**
 * The buckets of a field's keys, read from the term dictionary and the postings, or the points,
 * in one pass, as the documents' numbers in a snapshot of the index that stays the same across
 * requests: a report's buckets and records read by many requests agree, whatever is written
 * meanwhile, and no id travels with a bucket.
 *
 * <p>{@code action=open} pins the core's current searcher and answers its {@code snapshot} name
 * and {@code maxDoc}; {@code action=close} lets it go. A snapshot not asked of for {@code
 * IDLE_MS} is let go at the handler's next request (a client that died), and all are at the
 * core's close.
 *
 * <p>Buckets ({@code snapshot} and {@code f}): for every term of the field {@code f} starting with
 * {@code prefix} that two or more documents hold (its document frequency, as the terms component
 * counts it: deleted documents not yet merged away included), the numbers of the live documents
 * holding it. A term held by more than {@code max} documents (when given) is skipped and counted.
 * With {@code members}, the walk stops once its buckets hold that many documents and says the term
 * it stopped at ({@code next}), for the next request to start after ({@code after}). No stored
 * field is opened, and no key travels to Solr and back: the terms are walked in index order,
 * where listing them first and then looking each up cost a seek a key in every segment. A field
 * of points (the band keys, 64-bit numbers) has no term dictionary to walk: its buckets are the
 * values from {@code lo} to {@code hi} (inclusive) that two or more live documents hold, read
 * from the points of each segment and sorted here, a range whole; a value held by more than
 * {@code max} live documents is skipped and counted. The buckets come as each one's size and
 * all their documents, one after another.
 *
 * <p>Records ({@code action=records}, {@code snapshot}, {@code docs}, {@code fl}): each document's
 * id (from the id's docValues) and stored field {@code fl}, in the order asked, read in the
 * documents' order; null for a document not live in the snapshot.
 *
 * <p>One core: on SolrCloud a collection's shards each hold part of a bucket, and the client
 * reads members by queries. The local Solr registers it as {@code /buckets}; a Solr without this
 * class leaves it out (solrconfig.xml's {@code neardup.buckets} property).
 *
 * <pre>
 *   POST /solr/CORE/buckets  action=open                 ->  {"snapshot": "3", "maxDoc": 1000000}
 *   POST /solr/CORE/buckets  snapshot=3&amp;f=md5_hash&amp;prefix=&amp;max=100&amp;members=20000
 *     ->  {"sizes": [2, 3], "docs": [7, 912, 4, 5, 6], "skipped": 2, "largest": 516, "next": "0a7f..."}
 *   POST /solr/CORE/buckets  snapshot=3&amp;f=content_lsh&amp;lo=72057594037927936&amp;hi=73183493944770559
 *     ->  {"sizes": [2], "docs": [7, 8], "skipped": 0, "largest": 0, "next": null}
 *   POST /solr/CORE/buckets  action=records&amp;snapshot=3&amp;docs=912,7&amp;fl=content
 *     ->  {"ids": ["r912", "r7"], "values": ["...", "..."]}
 *   POST /solr/CORE/buckets  action=close&amp;snapshot=3    ->  {"closed": true}
 * </pre>
 */
public final class BucketsHandler extends RequestHandlerBase implements PermissionNameProvider, SolrCoreAware {
  /** A snapshot unused this long is let go. */
  static final long IDLE_MS = 10 * 60 * 1000L;

  private static final class Pinned {
    final RefCounted<SolrIndexSearcher> searcher;
    volatile long used = System.currentTimeMillis();

    Pinned(RefCounted<SolrIndexSearcher> searcher) {
      this.searcher = searcher;
    }
  }

  private final Map<String, Pinned> pinned = new ConcurrentHashMap<>();
  private final AtomicLong named = new AtomicLong();

  @Override
  public void inform(SolrCore core) {
    core.addCloseHook(new CloseHook() {
      @Override
      public void preClose(SolrCore closing) {
        for (String name : pinned.keySet()) {
          release(name);
        }
      }
    });
  }

  private boolean release(String name) {
    Pinned gone = pinned.remove(name);
    if (gone != null) {
      gone.searcher.decref();
    }
    return gone != null;
  }

  @Override
  public void handleRequestBody(SolrQueryRequest req, SolrQueryResponse rsp) throws IOException {
    if (req.getCoreContainer().isZooKeeperAware()) {
      // A shard holds part of each bucket: the client reads members by query there.
      throw new SolrException(SolrException.ErrorCode.BAD_REQUEST, "buckets are read here on one core only, not on SolrCloud");
    }
    long now = System.currentTimeMillis();
    for (Map.Entry<String, Pinned> entry : pinned.entrySet()) {
      if (now - entry.getValue().used > IDLE_MS) {
        release(entry.getKey());
      }
    }
    SolrParams params = req.getParams();
    String action = params.get("action", "buckets");
    if (action.equals("open")) {
      RefCounted<SolrIndexSearcher> searcher = req.getCore().getSearcher();
      String name = Long.toString(named.incrementAndGet());
      pinned.put(name, new Pinned(searcher));
      rsp.add("snapshot", name);
      rsp.add("maxDoc", searcher.get().getIndexReader().maxDoc());
      return;
    }
    String name = params.required().get("snapshot");
    if (action.equals("close")) {
      rsp.add("closed", release(name));
      return;
    }
    Pinned held = pinned.get(name);
    if (held == null) {
      throw new SolrException(SolrException.ErrorCode.BAD_REQUEST, "no snapshot " + name + " (closed, or unused for "
          + IDLE_MS / 60000 + " minutes)");
    }
    held.used = now;
    IndexReader reader = held.searcher.get().getIndexReader();
    String idField = req.getSchema().getUniqueKeyField().getName();
    if (action.equals("records")) {
      records(reader, rsp, idField, params.required().get("fl"), params.required().get("docs"));
      return;
    }
    if (!action.equals("buckets")) {
      throw new SolrException(SolrException.ErrorCode.BAD_REQUEST, "unknown action " + action);
    }
    String field = params.required().get("f");
    SchemaField schemaField = req.getSchema().getFieldOrNull(field);
    Found found = new Found();
    String next = null;
    if (schemaField != null && schemaField.getType().isPointField()) {
      points(reader, found, field, params.required().getLong("lo"), params.required().getLong("hi"),
          params.getInt("max", Integer.MAX_VALUE));
    } else {
      next = terms(reader, found, field, params.required().get("prefix"), params.getInt("max", Integer.MAX_VALUE),
          params.getInt("members", Integer.MAX_VALUE), params.get("after"));
    }
    rsp.add("sizes", ints(found.sizes, found.buckets));
    rsp.add("docs", ints(found.docs, found.held));
    rsp.add("skipped", found.skipped);
    rsp.add("largest", found.largest);
    rsp.add("next", next);
  }

  /** The first {@code size} of {@code values}, written as a list of numbers (no boxing). */
  private static IteratorWriter ints(int[] values, int size) {
    return writer -> {
      for (int i = 0; i < size; i++) {
        writer.add(values[i]);
      }
    };
  }

  /** Buckets as they are found: each one's size, and their documents one after another. */
  private static final class Found {
    int[] sizes = new int[64];
    int[] docs = new int[256];
    int buckets;
    int held;
    int skipped;
    int largest;

    void add(int[] members, int start, int end) {
      sizes = ArrayUtil.grow(sizes, buckets + 1);
      sizes[buckets++] = end - start;
      docs = ArrayUtil.grow(docs, held + end - start);
      System.arraycopy(members, start, docs, held, end - start);
      held += end - start;
    }

    void skip(int count) {
      skipped++;
      largest = Math.max(largest, count);
    }
  }

  /** The buckets of the terms of {@code field} starting with {@code prefix}; the term stopped at, if any. */
  private static String terms(IndexReader reader, Found found, String field, String start, int max, int page,
      String after) throws IOException {
    BytesRef prefix = new BytesRef(start);
    Bits live = MultiBits.getLiveDocs(reader);
    Terms terms = MultiTerms.getTerms(reader, field);
    TermsEnum walk = terms == null ? TermsEnum.EMPTY : terms.iterator();
    PostingsEnum postings = null;
    TermsEnum.SeekStatus status = walk.seekCeil(after == null ? prefix : new BytesRef(after));
    BytesRef term = status == TermsEnum.SeekStatus.END ? null
        : after != null && status == TermsEnum.SeekStatus.FOUND ? walk.next() : walk.term();
    int[] docs = new int[16];
    for (; term != null && StringHelper.startsWith(term, prefix); term = walk.next()) {
      int count = walk.docFreq();
      if (count < 2) {
        continue;
      }
      if (count > max) {
        found.skip(count);
        continue;
      }
      postings = walk.postings(postings, PostingsEnum.NONE);
      int size = 0;
      for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
        if (live == null || live.get(doc)) {
          docs = ArrayUtil.grow(docs, size + 1);
          docs[size++] = doc;
        }
      }
      found.add(docs, 0, size);
      if (found.held >= page) {
        return term.utf8ToString();
      }
    }
    return null;
  }

  /** The buckets of the values of a point field from {@code lo} to {@code hi}. */
  private static void points(IndexReader reader, Found found, String field, long lo, long hi, int max)
      throws IOException {
    List<LeafReaderContext> leaves = reader.leaves();
    Bits live = MultiBits.getLiveDocs(reader);
    byte[] low = new byte[Long.BYTES];
    byte[] high = new byte[Long.BYTES];
    LongPoint.encodeDimension(lo, low, 0);
    LongPoint.encodeDimension(hi, high, 0);
    Held held = new Held();
    for (LeafReaderContext leaf : leaves) {
      PointValues points = leaf.reader().getPointValues(field);
      if (points == null) {
        continue;
      }
      int base = leaf.docBase;
      points.intersect(new PointValues.IntersectVisitor() {
        @Override
        public void visit(int doc) {
          throw new IllegalStateException("a cell is never taken whole: each value is needed");
        }

        @Override
        public void visit(int doc, byte[] value) {
          if (Arrays.compareUnsigned(value, 0, Long.BYTES, low, 0, Long.BYTES) < 0
              || Arrays.compareUnsigned(value, 0, Long.BYTES, high, 0, Long.BYTES) > 0
              || (live != null && !live.get(base + doc))) {
            return;
          }
          held.add(LongPoint.decodeDimension(value, 0), base + doc);
        }

        @Override
        public PointValues.Relation compare(byte[] min, byte[] max) {
          return Arrays.compareUnsigned(max, 0, Long.BYTES, low, 0, Long.BYTES) < 0
              || Arrays.compareUnsigned(min, 0, Long.BYTES, high, 0, Long.BYTES) > 0
              ? PointValues.Relation.CELL_OUTSIDE_QUERY : PointValues.Relation.CELL_CROSSES_QUERY;
        }
      });
    }
    held.sort();
    for (int start = 0, end; start < held.size; start = end) {
      end = start + 1;
      while (end < held.size && held.values[end] == held.values[start]) {
        end++;
      }
      int count = end - start;
      if (count < 2) {
        continue;
      }
      if (count > max) {
        found.skip(count);
        continue;
      }
      found.add(held.docs, start, end);
    }
  }

  /** Values and the (global) documents holding them, sortable by value, then document. */
  private static final class Held {
    long[] values = new long[1024];
    int[] docs = new int[1024];
    int size;

    void add(long value, int doc) {
      if (size == values.length) {
        values = ArrayUtil.grow(values, size + 1);
        docs = ArrayUtil.growExact(docs, values.length);
      }
      values[size] = value;
      docs[size++] = doc;
    }

    void sort() {
      new IntroSorter() {
        long pivotValue;
        int pivotDoc;

        @Override
        protected void swap(int i, int j) {
          long v = values[i];
          values[i] = values[j];
          values[j] = v;
          int d = docs[i];
          docs[i] = docs[j];
          docs[j] = d;
        }

        @Override
        protected void setPivot(int i) {
          pivotValue = values[i];
          pivotDoc = docs[i];
        }

        @Override
        protected int comparePivot(int j) {
          int byValue = Long.compare(pivotValue, values[j]);
          return byValue != 0 ? byValue : Integer.compare(pivotDoc, docs[j]);
        }
      }.sort(0, size);
    }
  }

  /** Each document's id and stored {@code fl} (null where it is not live), in the order asked. */
  private static void records(IndexReader reader, SolrQueryResponse rsp, String idField, String fl, String asked)
      throws IOException {
    int[] docs = asked.isEmpty() ? new int[0] : Arrays.stream(asked.split(",")).mapToInt(Integer::parseInt).toArray();
    Integer[] order = new Integer[docs.length];
    for (int i = 0; i < docs.length; i++) {
      if (docs[i] < 0 || docs[i] >= reader.maxDoc()) {
        throw new SolrException(SolrException.ErrorCode.BAD_REQUEST, "no document " + docs[i] + " in the snapshot");
      }
      order[i] = i;
    }
    // In the documents' order: a docValues iterator only moves forward, and neighbours share stored blocks.
    Arrays.sort(order, (a, b) -> Integer.compare(docs[a], docs[b]));
    List<LeafReaderContext> leaves = reader.leaves();
    Bits live = MultiBits.getLiveDocs(reader);
    StoredFields stored = reader.storedFields();
    Set<String> wanted = Set.of(fl);
    SortedDocValues[] idValues = new SortedDocValues[leaves.size()];
    String[] ids = new String[docs.length];
    String[] values = new String[docs.length];
    for (int i : order) {
      int doc = docs[i];
      if (live != null && !live.get(doc)) {
        continue;
      }
      int at = ReaderUtil.subIndex(doc, leaves);
      LeafReaderContext leaf = leaves.get(at);
      if (idValues[at] == null) {
        idValues[at] = DocValues.getSorted(leaf.reader(), idField);
      }
      SortedDocValues idsHere = idValues[at];
      // A document asked twice is where the iterator already is.
      if (idsHere.docID() == doc - leaf.docBase || idsHere.advanceExact(doc - leaf.docBase)) {
        ids[i] = idsHere.lookupOrd(idsHere.ordValue()).utf8ToString();
      }
      values[i] = stored.document(doc, wanted).get(fl);
    }
    rsp.add("ids", Arrays.asList(ids));
    rsp.add("values", Arrays.asList(values));
  }

  @Override
  public String getDescription() {
    return "the documents holding each shared key, from the term dictionary and the postings, or the points, in a snapshot of the index";
  }

  @Override
  public Name getPermissionName(AuthorizationContext request) {
    return Name.READ_PERM;
  }
}
