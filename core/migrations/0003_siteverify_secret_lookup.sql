ALTER TABLE "pass_tokens" ADD COLUMN "cdata" text;--> statement-breakpoint
CREATE INDEX "apps_secret_hash_idx" ON "apps" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "apps_previous_secret_hash_idx" ON "apps" USING btree ("previous_secret_hash");