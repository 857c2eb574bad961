package neardup;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.handler.RequestHandlerBase;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.response.SolrQueryResponse;
import org.apache.solr.security.AuthorizationContext;
import org.apache.solr.security.PermissionNameProvider;

/**
 * The members of buckets, read from the postings: for each key of {@code keys} (a term of the
 * field {@code f}, the keys separated by commas), the ids of the live documents holding it, read
 * from the id field's docValues. No stored field is opened, where a query listing the members
 * would open each member's stored fields and list its keys.
 *
 * <p>One core: on SolrCloud a collection's shards each hold part of a bucket, and the client
 * reads members as before. The local Solr registers it as {@code /buckets}; a Solr without this
 * class leaves it out (solrconfig.xml's {@code neardup.buckets} property).
 *
 * <pre>
 *   POST /solr/CORE/buckets  f=content_lsh&amp;keys=0a1b...,0a2c...  ->  {"buckets": [[id, id], [id, id, id]]}
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
    String keys = params.required().get("keys");
    String idField = req.getSchema().getUniqueKeyField().getName();
    List<LeafReaderContext> leaves = req.getSearcher().getTopReaderContext().leaves();
    List<List<String>> buckets = new ArrayList<>();
    for (String key : keys.split(",", -1)) {
      if (key.isEmpty()) {
        throw new SolrException(SolrException.ErrorCode.BAD_REQUEST, "an empty key in keys");
      }
      buckets.add(members(leaves, field, idField, new BytesRef(key)));
    }
    rsp.add("buckets", buckets);
  }

  private static List<String> members(List<LeafReaderContext> leaves, String field, String idField, BytesRef key)
      throws IOException {
    List<String> ids = new ArrayList<>();
    PostingsEnum postings = null;
    for (LeafReaderContext leaf : leaves) {
      LeafReader reader = leaf.reader();
      Terms terms = reader.terms(field);
      if (terms == null) {
        continue;
      }
      TermsEnum found = terms.iterator();
      if (!found.seekExact(key)) {
        continue;
      }
      postings = found.postings(postings, PostingsEnum.NONE);
      Bits live = reader.getLiveDocs();
      SortedDocValues idValues = DocValues.getSorted(reader, idField);
      for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
        if ((live == null || live.get(doc)) && idValues.advanceExact(doc)) {
          ids.add(idValues.lookupOrd(idValues.ordValue()).utf8ToString());
        }
      }
    }
    return ids;
  }

  @Override
  public String getDescription() {
    return "the ids of the documents holding each key, from the postings";
  }

  @Override
  public Name getPermissionName(AuthorizationContext request) {
    return Name.READ_PERM;
  }
}
