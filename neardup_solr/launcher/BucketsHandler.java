package neardup;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.MultiBits;
import org.apache.lucene.index.MultiTerms;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.StringHelper;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.handler.RequestHandlerBase;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.response.SolrQueryResponse;
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
 * <p>One core: on SolrCloud a collection's shards each hold part of a bucket, and the client
 * reads members by queries. The local Solr registers it as {@code /buckets}; a Solr without this
 * class leaves it out (solrconfig.xml's {@code neardup.buckets} property).
 *
 * <pre>
 *   POST /solr/CORE/buckets  f=content_lsh&amp;prefix=0a&amp;max=100&amp;members=20000
 *     ->  {"buckets": [[id, id], [id, id, id]], "skipped": 2, "largest": 516, "next": "0a7f..."}
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

  /** The ids of a term's live documents, in index order. */
  private static List<String> members(PostingsEnum postings, Bits live, List<LeafReaderContext> leaves, String idField)
      throws IOException {
    List<String> ids = new ArrayList<>();
    // A doc values iterator only moves forward: one a leaf for each term, made when first needed.
    SortedDocValues[] idValues = new SortedDocValues[leaves.size()];
    for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
      if (live != null && !live.get(doc)) {
        continue;
      }
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

  @Override
  public String getDescription() {
    return "the ids of the documents holding each shared key, from the term dictionary and the postings";
  }

  @Override
  public Name getPermissionName(AuthorizationContext request) {
    return Name.READ_PERM;
  }
}
