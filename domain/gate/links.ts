/** The console's page of a review (`review.web_url`): what an agent gives its user, and a reviewer's email links to. */
export function reviewWebUrl(publicUrl: string, reviewId: string): string {
  return `${publicUrl}/reviews/${encodeURIComponent(reviewId)}`;
}
