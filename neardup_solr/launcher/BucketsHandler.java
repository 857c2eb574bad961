package neardup;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.ArrayUtil;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.IntroSorter;
import org.apache.lucene.util.StringHelper;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.handler.RequestHandlerBase;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.response.SolrQueryResponse;
import org.apache.solr.schema.SchemaField;
import org.apache.solr.security.AuthorizationContext;
import org.apache.solr.security.PermissionNameProvider;

/**
 * The buckets of a field's keys, read from the term dictionary and the postings in one pass: for
 * every term of the field {@code f} starting with {@code prefix} that two or more documents hold
 * (its document frequency, as the terms component counts it: deleted documents not yet merged
 * away included), the ids of the live documents holding it, read from the id field's docValues.
 * A term held by more than {@code max} documents (when given) is skipped and counted. With
 * {@code members}, the walk stops once its buckets hold that many ids and says the term it
 * stopped at ({@code next}), for the next request to start after ({@code after}). No stored
 * field is opened, and no key travels to Solr and back: the terms are walked in index order,
 * where listing them first and then looking each up cost a seek a key in every segment.
 *
 * <p>A field of points (the band keys, 64-bit numbers) has no term dictionary to walk: its
 * buckets are the values from {@code lo} to {@code hi} (inclusive) that two or more live
 * documents hold, read from the points of each segment and sorted here. A request reads one such
 * range whole (the client cuts a band into ranges of about the size it wants); a value held by
 * more than {@code max} live documents is skipped and counted.
 *
 * <p>One core: on SolrCloud a collection's shards each hold part of a bucket, and the client
 * reads members by queries. The local Solr registers it as {@code /buckets}; a Solr without this
 * class leaves it out (solrconfig.xml's {@code neardup.buckets} property).
 *
 * <pre>
 *   POST /solr/CORE/buckets  f=content_lsh&amp;prefix=0a&amp;max=100&amp;members=20000
 *     ->  {"buckets": [[id, id], [id, id, id]], "skipped": 2, "largest": 516, "next": "0a7f..."}
 *   POST /solr/CORE/buckets  f=content_lsh&amp;lo=72057594037927936&amp;hi=73183493944770559&amp;max=100
 *     ->  {"buckets": [[id, id]], "skipped": 0, "largest": 0, "next": null}
 * </pre>
 */
public final class BucketsHandler extends RequestHandlerBase implements PermissionNameProvider {
  @Override
  public void handleRequestBody(SolrQueryRequest req, SolrQueryResponse rsp) throws IOException {
    if (req.getCoreContainer().isZooKeeperAware()) {
      // A shard holds part of each bucket: the client reads members by query there.
      throw new SolrException(SolrException.ErrorCode.BAD_REQUEST, "buckets are read here on one core only, not on SolrCloud");
    }
    SolrParams params = req.getParams();
    String field = params.required().get("f");
    SchemaField schemaField = req.getSchema().getFieldOrNull(field);
    if (schemaField != null && schemaField.getType().isPointField()) {
      points(req, rsp, field, params.required().getLong("lo"), params.required().getLong("hi"),
          params.getInt("max", Integer.MAX_VALUE));
      return;
    }
    BytesRef prefix = new BytesRef(params.required().get("prefix"));
    int max = params.getInt("max", Integer.MAX_VALUE);
    int page = params.getInt("members", Integer.MAX_VALUE);
    String after = params.get("after");
    String idField = req.getSchema().getUniqueKeyField().getName();
    IndexReader reader = req.getSearcher().getIndexReader();
    List<LeafReaderContext> leaves = reader.leaves();
    Bits live = MultiBits.getLiveDocs(reader);
    List<List<String>> buckets = new ArrayList<>();
    int skipped = 0;
    int largest = 0;
    int held = 0;
    String next = null;
    Terms terms = MultiTerms.getTerms(reader, field);
    TermsEnum walk = terms == null ? TermsEnum.EMPTY : terms.iterator();
    PostingsEnum postings = null;
    BytesRef start = after == null ? prefix : new BytesRef(after);
    TermsEnum.SeekStatus status = walk.seekCeil(start);
    BytesRef term = status == TermsEnum.SeekStatus.END ? null
        : after != null && status == TermsEnum.SeekStatus.FOUND ? walk.next() : walk.term();
    for (; term != null && StringHelper.startsWith(term, prefix); term = walk.next()) {
      int count = walk.docFreq();
      if (count < 2) {
        continue;
      }
      if (count > max) {
        skipped++;
        largest = Math.max(largest, count);
        continue;
      }
      postings = walk.postings(postings, PostingsEnum.NONE);
      List<String> ids = members(postings, live, leaves, idField);
      buckets.add(ids);
      held += ids.size();
      if (held >= page) {
        next = term.utf8ToString();
        break;
      }
    }
    rsp.add("buckets", buckets);
    rsp.add("skipped", skipped);
    rsp.add("largest", largest);
    rsp.add("next", next);
  }

  /** The buckets of the values of a point field from {@code lo} to {@code hi}. */
  private static void points(SolrQueryRequest req, SolrQueryResponse rsp, String field, long lo, long hi, int max)
      throws IOException {
    String idField = req.getSchema().getUniqueKeyField().getName();
    IndexReader reader = req.getSearcher().getIndexReader();
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
    List<List<String>> buckets = new ArrayList<>();
    int skipped = 0;
    int largest = 0;
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
        skipped++;
        largest = Math.max(largest, count);
        continue;
      }
      buckets.add(ids(held.docs, start, end, leaves, idField));
    }
    rsp.add("buckets", buckets);
    rsp.add("skipped", skipped);
    rsp.add("largest", largest);
    rsp.add("next", null);
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

  /** The ids of the (global, ascending) documents {@code docs[start..end)}. */
  private static List<String> ids(int[] docs, int start, int end, List<LeafReaderContext> leaves, String idField)
      throws IOException {
    List<String> ids = new ArrayList<>(end - start);
    // A doc values iterator only moves forward: one a leaf for each bucket, made when first needed.
    SortedDocValues[] idValues = new SortedDocValues[leaves.size()];
    for (int i = start; i < end; i++) {
      int doc = docs[i];
      int at = ReaderUtil.subIndex(doc, leaves);
      LeafReaderContext leaf = leaves.get(at);
      if (idValues[at] == null) {
        idValues[at] = DocValues.getSorted(leaf.reader(), idField);
      }
      if (idValues[at].advanceExact(doc - leaf.docBase)) {
        ids.add(idValues[at].lookupOrd(idValues[at].ordValue()).utf8ToString());
      }
    }
    return ids;
  }

  /** The ids of a term's live documents, in index order. */
  private static List<String> members(PostingsEnum postings, Bits live, List<LeafReaderContext> leaves, String idField)
      throws IOException {
    int[] docs = new int[16];
    int size = 0;
    for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
      if (live == null || live.get(doc)) {
        docs = ArrayUtil.grow(docs, size + 1);
        docs[size++] = doc;
      }
    }
    return ids(docs, 0, size, leaves, idField);
  }

  @Override
  public String getDescription() {
    return "the ids of the documents holding each shared key, from the term dictionary and the postings, or the points";
  }

  @Override
  public Name getPermissionName(AuthorizationContext request) {
    return Name.READ_PERM;
  }
}
